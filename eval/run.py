"""The evaluation run: ingest → retrieve → answer → judge → report, checkpointed per stage.

Each system gets a directory under the run directory with append-only JSONL
logs, one line per finished unit of work (a persona ingested, a question
retrieved, answered, judged). A killed run started again with the same
settings skips what its logs say is done. A resumed store is checked: if a
persona's sessions were ingested but the system reports an empty store, the
run stops with an error instead of scoring zeros.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from baselines.registry import REGISTRY, SystemSpec, create
from eval.contract import MemorySystem, Persistent, Query, Retrieval, Sized, Usage
from eval.judge import Judge, RuleJudge
from eval.options import check_options
from eval.replay import Plan, Replay, load_replay
from eval.rundir import check_fingerprint, check_places, open_run
from eval.tokens import count_tokens
from keme.dataset.io import atomic_write_text, dump_json
from keme.dataset.paths import scope_path
from keme.errors import KemeError
from keme.models import QAItem

FAULT_ENV = "KEME_EVAL_FAULT_AFTER"  # test hook: SIGKILL the process after N retrieval records


class RunError(KemeError):
    pass


class Reader(Protocol):
    """Answers a question from a rendered context (see eval.reader.LLMReader)."""

    name: str

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]: ...


@dataclass
class Settings:
    data: Path
    out: Path
    systems: list[str]
    k: int = 10
    depth: int = 50
    mode: str = "offline"
    roles: tuple[str, ...] | None = None
    limit: int | None = None
    images: str = "caption"
    reader: Any = None
    judges: list[Judge] = field(default_factory=lambda: [RuleJudge()])
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    force: bool = False
    verify: bool = True  # False (--no-verify): score a dataset without checking it; every report says so
    on_progress: Callable[[str, int, int], None] = lambda system, done, total: None

    def __post_init__(self) -> None:
        check_options(k=self.k, depth=self.depth, mode=self.mode, roles=self.roles, limit=self.limit, images=self.images)

    def identity(self, replay: Replay) -> dict[str, Any]:
        """What a run's results depend on; a run directory is resumed only when all of it is the same."""
        return {
            "dataset_sha256": replay.dataset_sha, "k": self.k, "depth": self.depth,
            "mode": self.mode, "roles": list(replay.roles) if replay.roles else None, "limit": self.limit,
            "images": self.images,
            "reader": getattr(self.reader, "name", None),
            "params": {name: self.params[name] for name in self.systems if self.params.get(name)},
            "judges": [getattr(j, "name", "?") + (f":{j.prompts}:{j.runs}" if hasattr(j, "runs") else "") for j in self.judges],
        }


# ---------------------------------------------------------------- logs
class Log:
    """An append-only JSONL file read back as records."""

    def __init__(self, path: Path):
        self.path = path

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        records = []
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    # a torn last line from a killed process: everything before it stands
                    if handle.read().strip():
                        raise RunError(f"{self.path}:{number}: corrupt log line; delete {self.path.parent} to redo it")
        return records

    def append(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


_written = 0


def _count_record() -> None:
    global _written
    _written += 1
    fault = os.environ.get(FAULT_ENV)
    if fault and _written >= int(fault):
        os.kill(os.getpid(), signal.SIGKILL)


def _parallel(fn: Callable[[Any], Any], items: list[Any], workers: int):
    """Results in completion order (each is logged as soon as it exists)."""
    if workers <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in as_completed([pool.submit(fn, item) for item in items]):
            yield future.result()


# ---------------------------------------------------------------- memory measurement
def reset_peak_rss() -> None:
    """Reset the kernel's peak-RSS mark so each system's peak is its own (Linux; ignored elsewhere)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ---------------------------------------------------------------- one system
def render_context(result: Retrieval, k: int) -> str:
    if result.context is not None:
        return result.context
    return "\n".join(
        f"[{h.timestamp:%Y-%m-%d %H:%M}] {h.text}" if h.timestamp else h.text for h in result.hits[:k]
    )


class SystemRun:
    def __init__(self, spec: SystemSpec, system: MemorySystem, settings: Settings, directory: Path):
        self.spec, self.system, self.settings, self.dir = spec, system, settings, directory
        self.ingest_log = Log(directory / "ingest.jsonl")
        self.retrieve_log = Log(directory / "retrieve.jsonl")
        self.answer_log = Log(directory / "answer.jsonl")
        self.judge_log = Log(directory / "judge.jsonl")

    # -- ingest
    def _ingest(self, scope: str, sessions: list, usage: Usage) -> tuple[float, Usage, int]:
        started = time.perf_counter()
        messages = 0
        for session in sessions:
            usage = usage + self.system.ingest(scope, session)
            messages += len(session.messages)
        self.system.flush(scope)
        return time.perf_counter() - started, usage, messages

    def _check_store(self, scope: str, ingested_messages: int) -> None:
        if ingested_messages and isinstance(self.system, Sized) and self.system.size(scope) == 0:
            raise RunError(
                f"{self.spec.name}: the store for {scope} is empty although {ingested_messages} messages were ingested; "
                f"refusing to score an empty memory (delete {self.dir} to start this system over)"
            )

    def _storage(self, scope: str) -> int | None:
        return self.system.storage_bytes(scope) if isinstance(self.system, Sized) else None

    # -- retrieve
    def _retrieve(self, scope: str, question: QAItem) -> None:
        query = Query(text=question.question, now=question.asked_at, question_id=question.id,
                      gold=list(question.evidence) if self.spec.needs_gold else None)
        started = time.perf_counter()
        result = self.system.retrieve(scope, query, max(self.settings.k, self.settings.depth))
        seconds = time.perf_counter() - started
        context = render_context(result, self.settings.k)
        record = {
            "question_id": question.id, "persona_id": scope, "seconds": seconds,
            "hits": [{"m": h.message_ids, "s": h.session_ids, "score": round(h.score, 6)} for h in result.hits],
            "context_tokens": count_tokens(context), "usage": result.usage.model_dump(),
        }
        if self.settings.reader is not None:
            record["context"] = context
        self.retrieve_log.append(record)
        _count_record()

    def run_plan(self, plan: Plan, done: set[str]) -> None:
        todo = [q for q in plan.questions if q.id not in done]
        if not todo:
            return
        if self.settings.mode == "offline":
            self._offline(plan, todo)
        else:
            self._online(plan, done)
        self.settings.on_progress(self.spec.name, len(done) + len(todo), -1)

    def _offline(self, plan: Plan, todo: list[QAItem]) -> None:
        scope = plan.persona_id
        state = scope_path(self.dir / "state", scope)
        previous = [r for r in self.ingest_log.records() if r["persona_id"] == scope]
        if previous and previous[-1].get("saved") and isinstance(self.system, Persistent) and state.exists():
            self.system.load(scope, state)
            self._check_store(scope, previous[-1]["messages"])
        else:
            self.system.reset(scope)
            seconds, usage, messages = self._ingest(scope, plan.sessions, Usage())
            self._check_store(scope, messages)
            saved = False
            if isinstance(self.system, Persistent):
                self.system.save(scope, state)
                saved = True
            self.ingest_log.append({
                "persona_id": scope, "sessions": len(plan.sessions), "messages": messages, "seconds": seconds,
                "usage": usage.model_dump(), "storage_bytes": self._storage(scope), "saved": saved,
            })
        for question in todo:
            self._retrieve(scope, question)
            self.settings.on_progress(self.spec.name, 1, 0)

    def _online(self, plan: Plan, done: set[str]) -> None:
        scope = plan.persona_id
        self.system.reset(scope)
        total_seconds, usage, messages = 0.0, Usage(), 0
        for sessions, question in plan.steps("online"):
            if sessions:
                seconds, usage, count = self._ingest(scope, sessions, usage)
                total_seconds += seconds
                messages += count
            if question is not None and question.id not in done:
                self._check_store(scope, messages)
                self._retrieve(scope, question)
                self.settings.on_progress(self.spec.name, 1, 0)
        self.ingest_log.append({
            "persona_id": scope, "sessions": len(plan.sessions), "messages": messages, "seconds": total_seconds,
            "usage": usage.model_dump(), "storage_bytes": self._storage(scope), "saved": False,
        })

    # -- answer and judge
    def answer_and_judge(self, questions: dict[str, QAItem]) -> None:
        """Reader then judges, over what the logs do not have yet; up to `max_in_flight` requests at once.

        A failed LLM call is never an answer or a verdict: the question is left out of the log (a rerun
        asks again), counted, and the run stops when the client's failure fraction is over its limit.
        """
        from keme.llm import CallFailed

        reader = self.settings.reader
        if reader is None:
            return
        client = getattr(reader, "client", None)
        # an in-process model answers one request at a time: threads would only queue
        workers = client.config.max_in_flight if client is not None and client.config.provider != "local" else 1
        answered = {r["question_id"] for r in self.answer_log.records()}
        todo = [r for r in self.retrieve_log.records() if r["question_id"] not in answered]

        def answer(record: dict[str, Any]) -> dict[str, Any] | None:
            question = questions[record["question_id"]]
            started = time.perf_counter()
            try:
                text, usage = reader.answer(question, record.get("context", ""))
            except CallFailed:
                return None
            return {"question_id": question.id, "answer": text, "seconds": time.perf_counter() - started,
                    "usage": usage.model_dump()}

        for result in _parallel(answer, todo, workers):
            if result is not None:
                self.answer_log.append(result)
            self.settings.on_progress(f"{self.spec.name} (answers)", 1, 0)
        judged = {r["question_id"] for r in self.judge_log.records()}
        pending = [r for r in self.answer_log.records() if r["question_id"] not in judged]

        def judge(record: dict[str, Any]) -> dict[str, Any] | None:
            question = questions[record["question_id"]]
            try:
                verdicts = {j.name: j.judge(question, record["answer"]).model_dump() for j in self.settings.judges}
            except CallFailed:
                return None
            return {"question_id": question.id, "verdicts": verdicts}

        for result in _parallel(judge, pending, workers):
            if result is not None:
                self.judge_log.append(result)
            self.settings.on_progress(f"{self.spec.name} (judging)", 1, 0)
        if client is not None:
            client.check_failures(f"{self.spec.name}'s answers")

    def run(self, replay: Replay) -> None:
        reset_peak_rss()
        done = {r["question_id"] for r in self.retrieve_log.records()}
        for plan in replay.plans:
            self.run_plan(plan, done)
        self.answer_and_judge({q.id: q for q in replay.questions})
        info_path = self.dir / "system.json"
        own = getattr(self.system, "peak_rss_bytes", None)  # systems in a subprocess measure themselves
        peak = own() if callable(own) else peak_rss_bytes()
        if info_path.exists():  # a resumed run keeps the larger of the two peaks
            peak = max(peak, json.loads(info_path.read_text()).get("peak_rss_bytes", 0))
        atomic_write_text(info_path, dump_json({
            "name": self.spec.name, "fingerprint": self.system.config_fingerprint(), "publishable": self.spec.publishable,
            "needs_gold": self.spec.needs_gold, "peak_rss_bytes": peak,
        }))


def build_system(name: str, settings: Settings) -> tuple[SystemSpec, MemorySystem]:
    params = dict(settings.params.get(name, {}))
    if name.startswith("subprocess:"):
        from eval.subprocess_adapter import SubprocessSystem

        inner = name.split(":", 1)[1]
        command = params.pop("command", None)
        spec = REGISTRY.get(inner)
        try:
            system = SubprocessSystem(inner, command=command, params=params)
        except OSError as exc:
            raise KemeError(f"{name}: cannot start {command or 'python -m eval.serve'}: {exc.strerror or exc}") from exc
        return SystemSpec(name, lambda: system, f"{inner} in a subprocess",
                          needs_gold=bool(spec and spec.needs_gold), publishable=bool(spec is None or spec.publishable)), system
    spec = REGISTRY.get(name)
    if spec is None:
        raise KemeError(f"unknown memory system {name!r}; known: {', '.join(REGISTRY)} (or subprocess:<name>)")
    if not params:
        return spec, create(name)
    try:
        return spec, create(name, **params)
    except (TypeError, ValueError) as exc:  # a value of the right type that the system still refuses
        raise KemeError(f"--params: {name}: {exc}") from exc


def resolve_systems(arg: str) -> list[str]:
    """The systems named by --systems, in order, each once; a name that is no system is refused."""
    if arg.strip() == "all":
        return list(REGISTRY)
    names = list(dict.fromkeys(n.strip() for n in arg.split(",") if n.strip()))
    if not names:
        raise KemeError(f"--systems names no memory system; known: {', '.join(REGISTRY)}, or 'all'")
    unknown = [n for n in names if n not in REGISTRY and not n.startswith("subprocess:")]
    if unknown:
        raise KemeError(f"unknown memory systems {unknown}; known: {', '.join(REGISTRY)}, or 'all'")
    bare = [n for n in names if n.startswith("subprocess:") and not n.split(":", 1)[1]]
    if bare:
        raise KemeError("--systems: subprocess: needs the name of the system to serve, e.g. subprocess:bm25")
    return names


def calibrate_judges(settings: Settings, replay: Replay) -> None:
    """Once per run: how each LLM judge treats known-right and known-wrong answers (judge_calibration.json)."""
    from eval.llm_judge import calibrate

    path = settings.out / "judge_calibration.json"
    judges = [j for j in settings.judges if hasattr(j, "client")]
    if not judges or settings.reader is None or path.exists():
        return
    atomic_write_text(path, dump_json({j.name: calibrate(j, replay.questions) for j in judges}))


def run(settings: Settings, replay: Replay | None = None) -> dict[str, Any]:
    """Run every stage for every system and write the reports; returns the summary.

    `replay`: the loaded dataset when the caller has it already (the CLI, for its progress bar).
    """
    from eval.report import write_reports

    check_places(settings.out, settings.data, settings.systems)
    if replay is None:
        replay = load_replay(settings.data, settings.roles, settings.limit, settings.images, verify=settings.verify)
    settings.out.mkdir(parents=True, exist_ok=True)
    state = open_run(settings.out, json.loads(json.dumps(settings.identity(replay), default=str)), settings.force)
    for name in settings.systems:
        spec, system = build_system(name, settings)
        try:
            check_fingerprint(settings.out, state, name, system.config_fingerprint(), settings.force)
            SystemRun(spec, system, settings, settings.out / name).run(replay)
        finally:
            close = getattr(system, "close", None)
            if close is not None:
                close()
    calibrate_judges(settings, replay)
    return write_reports(settings, replay)

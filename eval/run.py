"""The evaluation run: ingest → retrieve → answer → judge → report, checkpointed per stage.

Each system gets a directory under the run directory with append-only JSONL
logs, one line per finished unit of work (a persona ingested, a question
retrieved, answered, judged). A killed run started again with the same
settings skips what its logs say is done, and its result equals an
uninterrupted run's:

- A record counts only once its newline is on disk: a torn last line (a kill
  mid-append) is ignored and cut off before the next append, so its work is
  redone. A corrupt line before the last is an error naming file and line.
- Retrieval may change a system's state (Memory Bank counts hits and
  last-used times, factmem marks skills used and archives stale ones), and
  later retrievals depend on that state. So a resumed persona is rebuilt the
  way the uninterrupted run built it: its ingested store (loaded from the
  snapshot a `Persistent` system saved after ingest, else ingested again),
  then every retrieval the logs already hold is *replayed* in the original
  order (online mode: interleaved with ingest, as before), its result
  compared with the logged hits and not logged again. A replay that differs
  from its log stops the run: the system is not deterministic or its state
  was not restored, and the resumed metrics would not be the uninterrupted
  ones. Replay is general (no system needs to know about resuming, a
  subprocess system included) and costs one retrieval per question already
  done, once per resume: on the sample's first persona 0.5–2 ms a question
  (vibebrowser, memory_bank, factmem). The alternative, a state snapshot with
  every logged record, measured about 19 ms a question for each of them, paid
  on every run, not only on a resume, and growing with the store.
- A persona whose questions are all logged is skipped: nothing it does
  later depends on its store. A store that is empty although sessions were
  ingested stops the run instead of scoring zeros.
- The state snapshot is written to a temporary directory and renamed into
  place, and logged as saved only afterwards, so a kill during a save leaves
  either the old snapshot or none, never half of one.
- The run directory is locked for the whole run (`keme.dataset.lock`): a
  second run into it refuses at once instead of interleaving its logs.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import resource
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.contract import Answering, Closeable, MemorySystem, Persistent, Query, Retrieval, Sized, Usage
from eval.disagreement import THRESHOLD_DEFAULT
from eval.errors import RunError
from eval.judge import Judge, RuleJudge
from eval.llm_judge import LLMJudge, calibrate
from eval.log import Log
from eval.options import Images, Mode, check_options
from eval.reader import LLMReader, Reader
from eval.registry import REGISTRY, SystemSpec, create, default_names
from eval.replay import Plan, Replay, replay_of
from eval.report import write_reports
from eval.rundir import check_fingerprint, check_places, open_run
from eval.subprocess_adapter import SubprocessSystem
from eval.systems import availability
from eval.uncertainty import B_DEFAULT
from keme.dataset import Dataset
from keme.dataset.io import atomic_write_text, dump_json
from keme.dataset.lock import directory_lock
from keme.dataset.paths import scope_path
from keme.dataset.staging import Made
from keme.errors import KemeError
from keme.llm import CallFailed
from keme.models import QAItem, Role
from keme.text.tokens import count_tokens

FAULT_ENV = "KEME_EVAL_FAULT_AFTER"  # test hook: SIGKILL the process after N retrieval records
INGEST_FAULT_ENV = "KEME_EVAL_FAULT_AFTER_INGEST"  # test hook: SIGKILL the process after N ingested sessions


@dataclass(frozen=True)
class Settings:
    """One `keme eval` run; the option values are checked by eval.options.Options (the CLI's check too)."""

    data: Dataset  # loaded once by the caller; checked (keme.validate.verified_dataset) or reported as not
    out: Path
    systems: list[str]
    k: int = 10
    depth: int = 50
    mode: Mode = "offline"
    roles: tuple[Role, ...] | None = None
    limit: int | None = None
    images: Images = "caption"
    reader: Reader | None = None
    judges: list[Judge] = field(default_factory=lambda: [RuleJudge()])
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    force: bool = False
    include_flagged: bool = False  # imported questions with source findings are scored too
    disagreement_threshold: float = THRESHOLD_DEFAULT  # judges parting on more questions flag the run
    bootstrap: int = B_DEFAULT  # replicates of the reports' 95 % intervals (they are recomputed, not resumed)
    on_progress: Callable[[str, int, int], None] = lambda system, done, total: None

    def __post_init__(self) -> None:
        check_options(
            k=self.k,
            depth=self.depth,
            mode=self.mode,
            roles=self.roles,
            limit=self.limit,
            images=self.images,
            disagreement_threshold=self.disagreement_threshold,
        )

    def identity(self, replay: Replay) -> dict[str, Any]:
        """What a run's results depend on; a run directory is resumed only when all of it is the same."""
        return {
            "dataset_sha256": replay.dataset_sha,
            "k": self.k,
            "depth": self.depth,
            "mode": self.mode,
            "roles": list(replay.roles) if replay.roles else None,
            "limit": self.limit,
            "images": self.images,
            "speakers": replay.speakers,
            **({"include_flagged": True} if replay.include_flagged else {}),
            "reader": self.reader.name if self.reader is not None else None,
            "params": {name: self.params[name] for name in self.systems if self.params.get(name)},
            "judges": [
                j.name + (f":{j.prompts}:{j.runs}" if isinstance(j, LLMJudge) else "") for j in self.judges
            ],
        }


_faults: dict[str, int] = {}
_fault_limits: dict[str, int] = {}  # each hook's limit, read at its first use (the environ lookup per record
# cost a tenth of the harness's time per question); 0: not set


def _fault_point(env: str) -> None:
    """Test hook: SIGKILL this process when `env` is set and this point has been passed that many times."""
    limit = _fault_limits.get(env)
    if limit is None:
        limit = _fault_limits[env] = int(os.environ.get(env) or 0)
    if limit:
        _faults[env] = _faults.get(env, 0) + 1
        if _faults[env] >= limit:
            os.kill(os.getpid(), signal.SIGKILL)


def _count_record() -> None:
    _fault_point(FAULT_ENV)


def _parallel(fn: Callable[[Any], Any], items: list[Any], workers: int):
    """Results in completion order (each is logged as soon as it exists)."""
    if workers <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return

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


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> int:
    return count_tokens(text)


STAMP_TOKENS = 5  # "[2026-05-01 09:30] ": year, month, day, hour, minute


def context_tokens(result: Retrieval, k: int) -> int:
    """count_tokens(render_context(result, k)), from the hits' own counts (a token never spans the
    newline or the stamp's "] " between them, so the counts add up; the same messages come back question
    after question, so each is counted once)."""
    if result.context is not None:
        return count_tokens(result.context)
    return sum(_tokens(h.text) + (STAMP_TOKENS if h.timestamp else 0) for h in result.hits[:k])


def context_message_ids(result: Retrieval, k: int) -> list[str]:
    """The messages the reader's context holds: the system's own list, else those of the first k hits."""
    if result.context_message_ids is not None:
        return list(result.context_message_ids)
    return list(dict.fromkeys(m for h in result.hits[:k] for m in h.message_ids))


class SystemRun:
    def __init__(self, spec: SystemSpec, system: MemorySystem, settings: Settings, directory: Path):
        self.spec, self.system, self.settings, self.dir = spec, system, settings, directory
        self.ingest_log = Log(directory / "ingest.jsonl", ("persona_id", "messages"))
        self.retrieve_log = Log(
            directory / "retrieve.jsonl", ("question_id", "hits", "seconds", "context_tokens")
        )
        self.answer_log = Log(directory / "answer.jsonl", ("question_id", "answer"))
        self.judge_log = Log(directory / "judge.jsonl", ("question_id", "verdicts"))
        self.answered_by: str | None = None  # the reader's name, once it has one

    # -- ingest
    def _ingest(self, scope: str, sessions: list, usage: Usage) -> tuple[float, Usage, int]:
        started = time.perf_counter()
        messages = 0
        for session in sessions:
            usage = usage + self.system.ingest(scope, session)
            messages += len(session.messages)
            _fault_point(INGEST_FAULT_ENV)
        self.system.flush(scope)
        return time.perf_counter() - started, usage, messages

    def _check_store(self, scope: str, ingested_messages: int) -> None:
        if ingested_messages and isinstance(self.system, Sized) and self.system.size(scope) == 0:
            raise RunError(
                f"{self.spec.name}: the store for {scope} is empty although "
                f"{ingested_messages} messages were ingested; refusing to score an empty memory "
                f"(delete {self.dir} to start this system over)"
            )

    def _storage(self, scope: str) -> int | None:
        return self.system.storage_bytes(scope) if isinstance(self.system, Sized) else None

    def _memories(self, scope: str) -> int | None:
        """How many items the scope's store holds after ingest (Sized systems), for the summary."""
        return self.system.size(scope) if isinstance(self.system, Sized) else None

    def _save_state(self, scope: str, state: Path) -> None:
        """The system's snapshot of `scope`, put in place whole (a kill leaves the old one or none)."""

        made = Made()  # a fresh marked directory: a path the run did not make is never removed
        try:
            partial = made.directory(state.parent, f"{state.name}.partial")
            self.system.save(scope, partial)
            made.swap_in(partial, state)
        finally:
            made.cleanup()

    # -- retrieve
    def _query(self, question: QAItem) -> Query:
        return Query(
            text=question.question,
            now=question.asked_at,
            question_id=question.id,
            gold=list(question.evidence) if self.spec.needs_gold else None,
        )

    def _retrieve(self, scope: str, question: QAItem) -> None:
        started = time.perf_counter()
        result = self.system.retrieve(scope, self._query(question), max(self.settings.k, self.settings.depth))
        seconds = time.perf_counter() - started
        record = {
            "question_id": question.id,
            "persona_id": scope,
            "seconds": seconds,
            "hits": [{"m": h.message_ids, "s": h.session_ids, "score": h.score} for h in result.hits],
            "context_tokens": context_tokens(result, self.settings.k),
            "usage": result.usage.model_dump(),
        }
        if not self.spec.query_based:  # its hits are a context window: evidence_in_context reads this
            record["context_m"] = context_message_ids(result, self.settings.k)
        if self.settings.reader is not None:
            record["context"] = render_context(result, self.settings.k)
        self.retrieve_log.append(record)
        _count_record()

    def _replay(self, scope: str, question: QAItem, logged: dict[str, Any]) -> None:
        """Redo a logged retrieval for its side effects on the system's state; its result must match the
        log."""
        result = self.system.retrieve(scope, self._query(question), max(self.settings.k, self.settings.depth))
        now = [(h.message_ids, h.session_ids) for h in result.hits]
        then = [(h.get("m"), h.get("s")) for h in logged["hits"]]
        if now != then:
            rank = (
                next((i for i, (a, b) in enumerate(zip(now, then)) if a != b), min(len(now), len(then))) + 1
            )
            raise RunError(
                f"{self.spec.name}: resuming {scope}, question {question.id} retrieved other hits "
                f"than the logged run (they differ from rank {rank}); the system is not deterministic "
                f"or its restored state is not the one the run had, so the resumed metrics would not "
                f"be an uninterrupted run's; "
                f"delete {self.dir} to run this system again from the start"
            )

    def _ask(self, scope: str, question: QAItem, logged: dict[str, dict[str, Any]]) -> None:
        if question.id in logged:
            self._replay(scope, question, logged[question.id])
        else:
            self._retrieve(scope, question)
            self.settings.on_progress(self.spec.name, 1, 0)

    def run_plan(self, plan: Plan, logged: dict[str, dict[str, Any]]) -> None:
        """One persona: ingest and ask, replaying what `logged` (question id → retrieve record) already
        holds."""
        ingested = any(r["persona_id"] == plan.persona_id for r in self.ingest_log.records())
        if ingested and all(q.id in logged for q in plan.questions):
            return  # (online mode logs the ingest last: a kill just before it redoes the persona)
        if self.settings.mode == "offline":
            self._offline(plan, logged)
        else:
            self._online(plan, logged)
        self.settings.on_progress(self.spec.name, len(plan.questions), -1)

    def _offline(self, plan: Plan, logged: dict[str, dict[str, Any]]) -> None:
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
                self._save_state(scope, state)
                saved = True
            self.ingest_log.append(
                {
                    "persona_id": scope,
                    "sessions": len(plan.sessions),
                    "messages": messages,
                    "seconds": seconds,
                    "usage": usage.model_dump(),
                    "storage_bytes": self._storage(scope),
                    "memories": self._memories(scope),
                    "saved": saved,
                }
            )
        for question in plan.questions:
            self._ask(scope, question, logged)

    def _online(self, plan: Plan, logged: dict[str, dict[str, Any]]) -> None:
        scope = plan.persona_id
        self.system.reset(scope)
        total_seconds, usage, messages = 0.0, Usage(), 0
        for sessions, question in plan.steps("online"):
            if sessions:
                seconds, usage, count = self._ingest(scope, sessions, usage)
                total_seconds += seconds
                messages += count
            if question is not None:
                self._check_store(scope, messages)
                self._ask(scope, question, logged)
        self.ingest_log.append(
            {
                "persona_id": scope,
                "sessions": len(plan.sessions),
                "messages": messages,
                "seconds": total_seconds,
                "usage": usage.model_dump(),
                "storage_bytes": self._storage(scope),
                "memories": self._memories(scope),
                "saved": False,
            }
        )

    # -- answer and judge
    def answer_and_judge(self, questions: dict[str, QAItem]) -> None:
        """Reader then judges, over what the logs do not have yet; up to `max_in_flight` requests at once.

        A failed LLM call is never an answer or a verdict: the question is left out of the log (a rerun
        asks again), counted, and the run stops when the client's failure fraction is over its limit.
        """

        reader = self.settings.reader
        if isinstance(self.system, Answering):  # a blind baseline: it picks its reader
            reader = self.system.reader_for(list(questions.values()), reader)
        if reader is None:
            return
        self.answered_by = reader.name
        client = reader.client if isinstance(reader, LLMReader) else None
        # an in-process model answers one request at a time: threads would only queue
        workers = (
            client.config.max_in_flight if client is not None and client.config.provider != "local" else 1
        )
        answered = {r["question_id"] for r in self.answer_log.records()}
        todo = [r for r in self.retrieve_log.records() if r["question_id"] not in answered]

        def answer(record: dict[str, Any]) -> dict[str, Any] | None:
            question = questions[record["question_id"]]
            started = time.perf_counter()
            try:
                text, usage = reader.answer(question, record.get("context", ""))
            except CallFailed:
                return None
            return {
                "question_id": question.id,
                "answer": text,
                "seconds": time.perf_counter() - started,
                "usage": usage.model_dump(),
            }

        for result in _parallel(answer, todo, workers):
            if result is not None:
                self.answer_log.append(result)
            self.settings.on_progress(f"{self.spec.name} (answers)", 1, 0)
        judged = {r["question_id"] for r in self.judge_log.records()}
        pending = [r for r in self.answer_log.records() if r["question_id"] not in judged]

        def judge(record: dict[str, Any]) -> dict[str, Any] | None:
            question = questions[record["question_id"]]
            try:
                verdicts = {
                    j.name: j.judge(question, record["answer"]).model_dump() for j in self.settings.judges
                }
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
        logged = {r["question_id"]: r for r in self.retrieve_log.records()}
        try:
            for plan in replay.plans:
                self.run_plan(plan, logged)
            self.finish(replay)
        finally:
            self.close_logs()

    def close_logs(self) -> None:
        """Every log on disk (appends are fsynced in batches: eval.log.Log)."""
        for log in (self.ingest_log, self.retrieve_log, self.answer_log, self.judge_log):
            log.close()

    def peak_rss(self) -> int:
        """The peak RSS of this process since `reset_peak_rss` (or the system's own, in a subprocess)."""
        own = getattr(self.system, "peak_rss_bytes", None)  # systems in a subprocess measure themselves
        return own() if callable(own) else peak_rss_bytes()

    def finish(self, replay: Replay, peak: int | None = None, fingerprint: str | None = None) -> None:
        """Once every persona is ingested and asked: answers and verdicts, then system.json (`peak` and
        `fingerprint`: the peak RSS of the work and the system's fingerprint after it, when it ran
        elsewhere; else this process's and this instance's)."""
        self.answer_and_judge({q.id: q for q in replay.questions})
        if peak is None:
            peak = self.peak_rss()
        info_path = self.dir / "system.json"
        if info_path.exists():  # a resumed run keeps the larger of the two peaks
            peak = max(peak, json.loads(info_path.read_text()).get("peak_rss_bytes", 0))
        atomic_write_text(
            info_path,
            dump_json(
                {
                    "name": self.spec.name,
                    "fingerprint": fingerprint or self.system.config_fingerprint(),
                    "publishable": self.spec.publishable,
                    "needs_gold": self.spec.needs_gold,
                    "query_based": self.spec.query_based,
                    "answered_by": self.answered_by,
                    "peak_rss_bytes": peak,
                }
            ),
        )


def build_system(name: str, settings: Settings) -> tuple[SystemSpec, MemorySystem]:
    params = dict(settings.params.get(name, {}))
    if name.startswith("subprocess:"):
        inner = name.split(":", 1)[1]
        command = params.pop("command", None)
        spec = REGISTRY.get(inner)
        try:
            system = SubprocessSystem(inner, command=command, params=params)
        except OSError as exc:
            raise KemeError(
                f"{name}: cannot start {command or 'python -m eval.serve'}: {exc.strerror or exc}"
            ) from exc
        return SystemSpec(
            name,
            lambda: system,
            f"{inner} in a subprocess",
            needs_gold=bool(spec and spec.needs_gold),
            publishable=bool(spec is None or spec.publishable),
            query_based=bool(spec is None or spec.query_based),
        ), system
    spec = REGISTRY.get(name)
    if spec is None:
        raise KemeError(
            f"unknown memory system {name!r}; known: {', '.join(REGISTRY)} (or subprocess:<name>)"
        )
    if not params:
        return spec, create(name)
    try:
        return spec, create(name, **params)
    except (TypeError, ValueError) as exc:  # a value of the right type that the system still refuses
        raise KemeError(f"--params: {name}: {exc}") from exc


def resolve_systems(arg: str) -> list[str]:
    """The systems named by --systems, in order, each once; a name that is no system is refused."""
    if arg.strip() == "all":  # the field's LLM systems are named explicitly (eval.registry.default_names)
        return [n for n in default_names() if n not in unavailable_defaults()]
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


def unavailable_defaults() -> dict[str, tuple[str, ...]]:
    """Systems `--systems all` would run that cannot run here, with the pip extras they miss (a core install
    has no embeddings: dense, hybrid and OpenClaw need `[embed]`)."""
    rows = {name: availability(REGISTRY[name]) for name in default_names()}
    return {name: row.missing for name, row in rows.items() if row.missing}


def calibrate_judges(settings: Settings, replay: Replay) -> None:
    """Once per run: how each LLM judge treats known-right and known-wrong answers
    (judge_calibration.json)."""

    path = settings.out / "judge_calibration.json"
    judges = [j for j in settings.judges if isinstance(j, LLMJudge)]
    if not judges or settings.reader is None or path.exists():
        return
    atomic_write_text(path, dump_json({j.name: calibrate(j, replay.questions) for j in judges}))


Systems = Callable[[Settings, Replay, dict[str, Any]], None]  # runs every system (ingest to system.json)


def run(settings: Settings, replay: Replay | None = None, systems: Systems | None = None) -> dict[str, Any]:
    """Run every stage for every system and write the reports; returns the summary.

    `replay`: the replay of `settings.data` when the caller has it already (the CLI, for its progress bar).
    `systems`: what runs the systems, given the settings, the replay and the run's state (run.json);
    default `run_systems`, one after the other in this process (eval.workers runs them as Ray tasks).
    The run directory is locked for the duration: a second run into it refuses at once.
    """
    if settings.data.root is None:
        raise KemeError(
            "eval replays a dataset on disk: write the dataset first (its content hash names the run)"
        )
    check_places(settings.out, settings.data.root, settings.systems)
    with directory_lock(settings.out, "keme eval"), _frozen_heap():
        return _run_locked(settings, replay, systems or run_systems)


@contextlib.contextmanager
def _frozen_heap():
    """Keep the garbage collector off what exists before the run (the dataset, the caller's objects): a
    million-token dataset is millions of objects, and each full collection walked them all (a tenth of a
    run's time, most of it while reading the logs back for the reports)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _run_locked(settings: Settings, replay: Replay | None, systems: Systems) -> dict[str, Any]:

    if replay is None:
        replay = replay_of(
            settings.data,
            settings.roles,
            settings.limit,
            settings.images,
            include_flagged=settings.include_flagged,
        )
    settings.out.mkdir(parents=True, exist_ok=True)
    state = open_run(
        settings.out, json.loads(json.dumps(settings.identity(replay), default=str)), settings.force
    )
    systems(settings, replay, state)
    calibrate_judges(settings, replay)
    return write_reports(settings, replay)


def run_systems(settings: Settings, replay: Replay, state: dict[str, Any]) -> None:
    """Every system in turn, in this process."""
    for name in settings.systems:
        spec, system = build_system(name, settings)
        try:
            check_fingerprint(settings.out, state, name, system.config_fingerprint(), settings.force)
            SystemRun(spec, system, settings, settings.out / name).run(replay)
        finally:
            if isinstance(system, Closeable):
                system.close()

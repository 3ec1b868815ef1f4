"""`keme eval --workers N`: each (system, persona) pair is a Ray task (keme.cluster).

The driver keeps everything a sequential run does once per system: it builds each system to check its
fingerprint against run.json, owns the run directory's logs, answers and judges with the reader, and writes
system.json and the reports. A task builds its own instance of the system and runs one persona as
`SystemRun.run_plan` does, ingest, retrieval, replay of what the logs already hold (a resumed run) and the
state snapshot of a Persistent system (written into the run directory by the worker, renamed into place
whole), but the records it would append to the logs are kept in memory and returned. The driver takes the
pairs in the sequential order (system after system, persona after persona) and appends their records in the
order the task made them, so every log holds the lines a sequential run writes (timings aside), and a
killed run resumes exactly as a killed sequential run does: a pair whose records were not appended is done
again, the rest is replayed or skipped.

Shipped: each persona's Plan once (its sessions and questions, put in the object store and read by every
system's task for it), the retrieve records the logs hold for the pair (a resume), and back the pair's
new records (hits: ids and scores, about 1–2 KB a question; with a reader, the context too) and its peak RSS.

A system that calls the harness's local model (mem0, LangMem without a base_url) reaches the driver's
llama.cpp server over loopback when the task runs on the driver's node; a task on another node starts the
model on its own node. A Persistent system's snapshots and the dense embedder's cache are files: on several
nodes the run directory (and the cache) must be on a filesystem they share.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from eval.contract import Closeable
from eval.local_model import LOCAL_MODEL
from eval.registry import REGISTRY, SystemSpec
from eval.replay import Plan, Replay
from eval.run import (
    FAULT_ENV,
    INGEST_FAULT_ENV,
    Settings,
    SystemRun,
    _count_record,
    build_system,
    reset_peak_rss,
)
from eval.rundir import MARKER, check_fingerprint
from keme.cluster import Cluster, host, node
from keme.errors import KemeError

LOGS = ("ingest_log", "retrieve_log")  # what run_plan appends to; answers and verdicts are the driver's
Appended = list[tuple[str, dict[str, Any]]]  # (log, record) in the order the pair made them


class _Kept:
    """A log in a worker: the records the driver's log holds for the pair, and the new ones, kept in order."""

    def __init__(self, name: str, held: list[dict[str, Any]], appended: Appended):
        self.name, self.held, self.appended = name, held, appended

    def records(self) -> list[dict[str, Any]]:
        return self.held + [record for log, record in self.appended if log == self.name]

    def append(self, record: dict[str, Any]) -> None:
        self.appended.append((self.name, record))


class _Answered:
    """The driver's reader, in a worker: it is there (retrievals keep their context for it), but answers
    in the driver."""

    name = "the driver's reader"


class _Served:
    """The driver's local model, for a task on the driver's node: its server's address."""

    def __init__(self, url: str, model: str):
        self._url, self.model = url, model

    def url(self) -> str:
        return self._url


def pair_task(
    name: str,
    spec: SystemSpec | None,
    settings: Settings,
    plan: Plan,
    held: dict[str, list[dict[str, Any]]],
    logged: dict[str, dict[str, Any]],
    served: tuple[str, str, str] | None,
) -> tuple[Appended, int, str]:
    """In a worker: one persona of one system; returns the log records it made, in order, the peak RSS
    and the system's fingerprint after the work (a system may name what it loaded only once it has).

    `held`: the ingest records the run's logs hold for the persona; `logged`: its retrieve records by
    question (replayed, not logged again); `served`: (node, url, model) of the driver's local model."""
    for hook in (FAULT_ENV, INGEST_FAULT_ENV):  # the test hooks kill the driver, which owns the logs
        os.environ.pop(hook, None)
    if not (settings.out / MARKER).exists():
        raise KemeError(
            f"a Ray worker on {host()} cannot see {settings.out / MARKER}: a run on several nodes needs "
            "--out on a filesystem every node shares"
        )
    if spec is not None:
        REGISTRY.setdefault(name, spec)  # registered in the driver only (a plugin, a test)
    if served is not None and served[0] == node():
        params = dict(settings.params.get(name, {})) | {"local_model": _Served(served[1], served[2])}
        settings = replace(settings, params=settings.params | {name: params})
    spec, system = build_system(name, settings)
    try:
        run = SystemRun(spec, system, settings, settings.out / name)
        appended: Appended = []
        run.ingest_log = _Kept("ingest_log", held["ingest_log"], appended)  # type: ignore[assignment]
        run.retrieve_log = _Kept("retrieve_log", held["retrieve_log"], appended)  # type: ignore[assignment]
        reset_peak_rss()
        run.run_plan(plan, logged)
        return appended, run.peak_rss(), system.config_fingerprint()
    finally:
        if isinstance(system, Closeable):
            system.close()


def _quiet(system: str, step: int, marker: int) -> None:
    pass


def _served(settings: Settings) -> tuple[str, str, str] | None:
    """The driver's local model, started now, when a system of the run calls it."""
    for name in settings.systems:
        spec = REGISTRY.get(name)
        if spec is not None and spec.needs_llm and settings.params.get(name, {}).get("base_url") is None:
            return node(), LOCAL_MODEL.url(), LOCAL_MODEL.model
    return None


def run_pairs(cluster: Cluster, settings: Settings, replay: Replay, state: dict[str, Any]) -> None:
    """Every system, its personas as Ray tasks (eval.run.run's `systems`, with the cluster bound)."""
    worker_settings = replace(
        settings,
        out=settings.out.resolve(),  # a worker's working directory is not the driver's
        data=None,  # type: ignore[arg-type]  # the task gets its persona's plan instead
        reader=_Answered() if settings.reader is not None else None,  # type: ignore[arg-type]
        judges=[],
        on_progress=_quiet,
    )
    served = _served(settings)
    plans = [cluster.put(plan) for plan in replay.plans]
    runs: list[tuple[SystemRun, list[tuple[Plan, Any]]]] = []
    try:
        for name in settings.systems:  # every pair submitted first, then taken in order
            spec, system = build_system(name, settings)
            runs.append((run := SystemRun(spec, system, settings, settings.out / name), []))
            check_fingerprint(settings.out, state, name, system.config_fingerprint(), settings.force)
            logged = {r["question_id"]: r for r in run.retrieve_log.records()}
            ingested = run.ingest_log.records()
            shipped = REGISTRY.get(name)
            for plan, ref in zip(replay.plans, plans):
                held = [r for r in ingested if r["persona_id"] == plan.persona_id]
                asked = {q.id: logged[q.id] for q in plan.questions if q.id in logged}
                if held and len(asked) == len(plan.questions):
                    continue  # done: nothing it would do later depends on its store (run_plan skips it too)
                logs = {"ingest_log": held, "retrieve_log": list(asked.values())}
                task = cluster.submit(pair_task, name, shipped, worker_settings, ref, logs, asked, served)
                runs[-1][1].append((plan, task))
        for run, pairs in runs:
            peak, fingerprint = 0, None
            for plan, task in pairs:
                appended, rss, fingerprint = cluster.result(task, f"{run.spec.name} on {plan.persona_id}")
                for log, record in appended:
                    getattr(run, log).append(record)
                    if log == "retrieve_log":
                        settings.on_progress(run.spec.name, 1, 0)
                        _count_record()
                settings.on_progress(run.spec.name, len(plan.questions), -1)
                peak = max(peak, rss)
            run.finish(replay, peak, fingerprint)
    finally:
        for run, _ in runs:
            run.close_logs()
            if isinstance(run.system, Closeable):
                run.system.close()


def systems_on(workers: int | None, address: str | None):
    """What `eval.run.run` takes as `systems`: `run_pairs` on a Ray connected when the run directory is
    locked (keme.cluster.Cluster: a local Ray with `workers` CPUs, or the cluster at `address`)."""

    def systems(settings: Settings, replay: Replay, state: dict[str, Any]) -> None:
        with Cluster(workers, address) as cluster:
            run_pairs(cluster, settings, replay, state)

    return systems

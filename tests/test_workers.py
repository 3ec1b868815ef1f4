"""Distributed runs (--workers, Ray): the output is the sequential run's, a killed run resumes, errors
read the same, and without Ray the option says how to get it.

One local Ray (2 CPUs) serves the in-process runs of this module; the killed runs are `keme` commands, each
starting its own.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, sample_dataset
from llm_doubles import ScriptedProvider

from eval.report import LEADERBOARD, MEASURED
from eval.run import Settings, run
from eval.workers import systems_on
from keme.brains import ProceduralBrain, make_brain
from keme.cli import synthesize_dataset
from keme.cluster import MISSING, Cluster
from keme.errors import KemeError
from keme.llm import LLMClient
from keme.synth.limits import parse_config
from keme.synth.pipeline import WORK, Progress, _Work, persona_trajectory, prepare_output
from keme.synth.workers import persona_task
from keme.validate import verified_dataset

# a local Ray in a pytest-xdist worker took the worker down with it in a full run (not alone): these run
# in a pytest of their own after the rest (scripts/test.sh)
pytestmark = [pytest.mark.slow, pytest.mark.ray]

PERSONAS = (
    "name: two\nseed: 5\npersonas:\n"
    "  - {language: en, start: 2026-05-01, months: 2}\n"
    "  - {language: zh, start: 2026-05-01, months: 1}\n"
)
TWO = parse_config(PERSONAS, "<test>")
SYSTEMS = ["bm25", "memory_bank", "recency", "vibebrowser", "factmem", "no_memory"]
# measured on the machine (eval.report.MEASURED) and the log fields they come from
TIMING = MEASURED | {"seconds", "retrieve_ms", "peak_rss_bytes"}
# factmem's write chain grows by a page more or less with its random nonces (see test_fault_resume.py)
UNREPRODUCIBLE = {"storage_bytes"}
MEASURED_COLUMNS = {label for key, label in LEADERBOARD if key in MEASURED}


@pytest.fixture(scope="module")
def ray_started():
    """A local Ray with 2 CPUs for the module: the first Cluster starts it, later ones reuse it."""
    ray = pytest.importorskip("ray")
    with Cluster(2):
        pass
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    out = tmp_path_factory.mktemp("sequential") / "data"
    synthesize_dataset(TWO, out)
    return out


def files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def keme(*args: str, env: dict[str, str] | None = None, **options) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "keme.cli", *args],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)} | (env or {}),
        timeout=600,
        **options,
    )


def killed(command: list[str], env: dict[str, str] | None = None, when=None) -> None:
    """Run a `keme` command in a session of its own and SIGKILL it: at its own fault hook (`env`), or once
    `when()` holds. Then end what it left of its local Ray (agents that outlive their raylet)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "keme.cli", *command],
        env=os.environ | {"PYTHONPATH": str(ROOT)} | (env or {}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        if when is not None:
            deadline = time.monotonic() + 300
            while not when() and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            process.send_signal(signal.SIGKILL)
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == -9, (
            f"the run was not killed (exit {process.returncode}):\n{stderr[-2000:]}"
        )
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# ---------------------------------------------------------------- synthesis
def test_synth_with_two_workers_writes_the_sequential_dataset(ray_started, sequential, tmp_path):
    synthesize_dataset(TWO, tmp_path / "data", workers=2)
    assert files(tmp_path / "data") == files(sequential)


def test_a_sequential_synth_killed_mid_run_resumes_on_workers(ray_started, sequential, tmp_path):
    config = tmp_path / "two.yaml"
    config.write_text(json.dumps(TWO.model_dump(mode="json")))
    out = tmp_path / "data"
    killed(["synth", "-c", str(config), "-o", str(out)], env={"KEME_FAULT_AFTER_CHECKPOINTS": "2"})
    synthesize_dataset(TWO, out, resume=True, workers=2)
    assert files(out) == files(sequential)


def test_a_distributed_synth_killed_mid_run_resumes_to_the_sequential_dataset(
    ray_started, sequential, tmp_path
):
    config = tmp_path / "two.yaml"
    config.write_text(json.dumps(TWO.model_dump(mode="json")))
    out = tmp_path / "data"
    command = ["synth", "-c", str(config), "-o", str(out), "--workers", "2"]
    killed(command, when=lambda: any((out / WORK).glob("*.sessions.000.jsonl")))
    assert not (out / "manifest.json").exists() and any((out / WORK).glob("p0*.json"))
    done = keme(*command, "--resume")
    assert done.returncode == 0, done.stderr
    assert files(out) == files(sequential)


def test_an_llm_brain_on_workers_shares_the_call_cache_and_counts_as_one_brain(ray_started, tmp_path):
    """A run recorded with a scripted model, replayed from its call cache in this process and on two
    workers (each with a brain of its own reading the one cache): the same dataset, byte for byte, the
    manifest's brain counts and LLM usage per stage (merged from the workers) included."""
    cfg = parse_config(PERSONAS + "brain:\n  mode: llm\n  retries: 1\n", "<test>")
    cache = cfg.llm.model_copy(update={"cache_dir": str(tmp_path / "cache")})
    client = LLMClient(cache, provider=ScriptedProvider())
    synthesize_dataset(
        cfg.model_copy(update={"llm": cache}), tmp_path / "recorded", brain=make_brain(cfg, client)
    )
    replay = cfg.model_copy(update={"llm": cache.model_copy(update={"provider": "replay"})})
    synthesize_dataset(replay, tmp_path / "here")
    synthesize_dataset(replay, tmp_path / "workers", workers=2)
    assert files(tmp_path / "workers") == files(tmp_path / "here")
    synth = json.loads((tmp_path / "workers" / "manifest.json").read_text())["stages"]["synth"]
    assert synth["agents"]["realizer.accepted"] > 0
    assert synth["llm"]["stages"]["synth.realizer"]["cache_hits"] > 0


class Counting(ProceduralBrain):
    """The procedural brain, counting its sessions as an LLM brain counts its calls."""

    def realize(self, leaf, traj, cfg, res, rng):
        self.stats.add("realizer", "sessions")
        return super().realize(leaf, traj, cfg, res, rng)


class _Interrupted(Exception):
    pass


class _Stops(_Work):
    """A work area whose run stops (as if killed) once `after` checkpoints are written."""

    def __init__(self, root: Path, after: int):
        super().__init__(root)
        self.after = after

    def save(self, *args, **kwargs):
        chunks = super().save(*args, **kwargs)
        if self.writes >= self.after:
            raise _Interrupted
        return chunks


def test_a_resumed_persona_counts_what_an_uninterrupted_one_does(tmp_path):
    """Each checkpoint keeps the brain's counts for its persona, so a worker that resumes a persona (with a
    brain of its own) returns the whole persona's counts."""
    whole, resumed = Counting(), Counting()
    for out in (tmp_path / "a", tmp_path / "b"):
        prepare_output(out, TWO, resume=False, force=False)
    persona_trajectory(0, TWO, _Work(tmp_path / "a" / WORK), whole, resume=False, progress=Progress())
    with pytest.raises(_Interrupted):
        persona_trajectory(
            0, TWO, _Stops(tmp_path / "b" / WORK, 2), Counting(), resume=False, progress=Progress()
        )
    persona_trajectory(0, TWO, _Work(tmp_path / "b" / WORK), resumed, resume=True, progress=Progress())
    assert whole.stats.as_dict()["realizer.sessions"] > 0
    assert resumed.stats.as_dict() == whole.stats.as_dict()


# ---------------------------------------------------------------- evaluation
def _strip(value, drop: set[str]):
    if isinstance(value, dict):
        return {k: _strip(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v, drop) for v in value]
    return value


def _tables(text: str) -> list[list[str]]:
    """A Markdown report with the columns of measured figures taken out of its tables."""
    lines, keep = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")] if line.startswith("|") else None
        if cells is None:
            keep = None
            lines.append([line])
            continue
        if keep is None:  # a table's header
            keep = [i for i, c in enumerate(cells) if c not in MEASURED_COLUMNS]
        lines.append([cells[i] for i in keep if i < len(cells)])
    return lines


def comparable(out: Path) -> dict[str, object]:
    """A run directory's files, with what two runs of the same work may differ in taken out: the measured
    figures (eval.report.MEASURED, and the timings in the logs), the factmem state's random key and the size
    of its database, and the plots (pictures of the same numbers, timings among them)."""
    found: dict[str, object] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = str(path.relative_to(out))
        drop = TIMING | (UNREPRODUCIBLE if name.startswith("factmem") or name == "summary.json" else set())
        if "/state/" in name or path.suffix == ".png" or path.name == ".keme.lock":
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            found[name] = [_strip(json.loads(line), drop) for line in text.splitlines()]
        elif path.suffix == ".json":
            data = json.loads(text)
            if name == "summary.json":
                data["systems"].get("factmem", {}).pop("storage_bytes", None)
            found[name] = _strip(data, drop)
        elif path.suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(text)))
            found[name] = [{k: v for k, v in r.items() if k not in MEASURED_COLUMNS} for r in rows]
        elif path.suffix == ".md":
            found[name] = _tables(text)
        else:
            found[name] = text
    return found


@pytest.fixture(scope="module")
def sequential_runs(tmp_path_factory):
    runs = {}
    for mode in ("offline", "online"):
        out = tmp_path_factory.mktemp(f"eval-{mode}")
        run(Settings(data=sample_dataset(), out=out, systems=SYSTEMS, mode=mode))
        runs[mode] = out
    return runs


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_eval_with_two_workers_gives_the_sequential_results(ray_started, sequential_runs, mode, tmp_path):
    run(
        Settings(data=sample_dataset(), out=tmp_path, systems=SYSTEMS, mode=mode), systems=systems_on(2, None)
    )
    got, expected = comparable(tmp_path), comparable(sequential_runs[mode])
    assert got.keys() == expected.keys()
    for name in expected:
        assert got[name] == expected[name], name


def test_a_sequential_eval_killed_mid_run_resumes_on_workers(ray_started, sequential_runs, tmp_path):
    command = [
        "eval",
        "--data",
        str(ROOT / "data/sample"),
        "--systems",
        ",".join(SYSTEMS),
        "--out",
        str(tmp_path),
    ]
    killed(command, env={"KEME_EVAL_FAULT_AFTER": "100"})
    run(Settings(data=sample_dataset(), out=tmp_path, systems=SYSTEMS), systems=systems_on(2, None))
    assert_same_results(tmp_path, sequential_runs["offline"])


def test_a_distributed_eval_killed_mid_run_resumes_to_the_sequential_results(sequential_runs, tmp_path):
    """The driver is killed (its fault hook counts the retrieval records it appends) and the run is started
    again, on workers too."""
    command = [
        "eval",
        "--data",
        str(ROOT / "data/sample"),
        "--systems",
        ",".join(SYSTEMS),
        "--out",
        str(tmp_path),
    ]
    killed([*command, "--workers", "2"], env={"KEME_EVAL_FAULT_AFTER": "150"})
    assert not (tmp_path / "summary.json").exists()
    done = keme(*command, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert_same_results(tmp_path, sequential_runs["offline"])


def assert_same_results(resumed: Path, whole: Path) -> None:
    """The summary and every question's hits of a resumed run are the uninterrupted run's (a system
    that is not Persistent logs its persona's ingest again when it is redone)."""
    got, expected = comparable(resumed), comparable(whole)
    assert got["summary.json"] == expected["summary.json"]
    assert got["results.jsonl"] == expected["results.jsonl"]
    for system in SYSTEMS:
        assert got[f"{system}/retrieve.jsonl"] == expected[f"{system}/retrieve.jsonl"], system


# ---------------------------------------------------------------- errors
def test_an_error_in_a_worker_is_the_error_a_sequential_run_gives(ray_started, tmp_path):
    with pytest.raises(KemeError) as here:
        verified_dataset(tmp_path / "nothing")
    with Cluster(2) as cluster:
        with pytest.raises(KemeError) as there:
            cluster.result(cluster.submit(verified_dataset, tmp_path / "nothing"), "a check")
        assert type(there.value) is type(here.value) and str(there.value) == str(here.value)
        with pytest.raises(
            KemeError, match=r"cannot see .*\.work: a run on several nodes needs --out"
        ) as seen:
            cluster.result(cluster.submit(persona_task, 0, TWO, tmp_path / "elsewhere", make_brain), "p01")
    assert "Traceback" not in str(seen.value)


def without_ray(*args: str) -> subprocess.CompletedProcess:
    """A `keme` command in a Python where `import ray` fails."""
    code = "import sys; sys.modules['ray'] = None; from keme.cli import main; sys.argv[0] = 'keme'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        timeout=600,
    )


@pytest.mark.parametrize("options", [["--workers", "2"], ["--ray-address", "127.0.0.1:6379"]])
def test_without_ray_workers_say_how_to_get_it(options, tmp_path):
    synth = without_ray("synth", "-c", str(ROOT / "configs/sample.yaml"), "-o", str(tmp_path / "d"), *options)
    evaluate = without_ray(
        "eval", "-d", str(ROOT / "data/sample"), "--systems", "bm25", "-o", str(tmp_path / "r"), *options
    )
    for done in (synth, evaluate):
        assert done.returncode == 2, done.stderr
        assert MISSING in " ".join(done.stderr.split()) and "Traceback" not in done.stderr
    assert not (tmp_path / "d").exists() and not (tmp_path / "r").exists()


def test_one_worker_needs_no_ray(tmp_path):
    done = without_ray(
        "synth", "-c", str(ROOT / "configs/sample.yaml"), "-o", str(tmp_path / "d"), "--workers", "1"
    )
    assert done.returncode == 0, done.stderr

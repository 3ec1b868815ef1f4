"""A command deletes only what it made: staging, swapping and locking beside or inside an output.

The defect this guards against: `keme view` staged in `<out>.tmp-site` and swapped through `<out>.old-site`
and removed either if it existed, whoever had made it; a user's `site.tmp-site/` vanished with exit 0. Each
probe plants user-made decoys at every name a command stages, swaps or locks at (read from the code:
`X.tmp-site`, `X.old-site`, `.X.partial-*`, `.X.replaced-*`, `.X.keme-*`, `.X.keme-lock`, `.keme.lock`,
`.keme-stage/`, `.work/`, the atomic writer's `.X.*.tmp`) and at a generic set of plausible sibling names,
runs every staging or swapping command (view, export of each format, import of each format, synth,
hardneg) and checks, with the probe's watcher, that nothing but the command's own output changed
(`escape` otherwise) and that every decoy is intact byte for byte. Two runs into one target: the first is
paused as it puts its output in place, and the second must be refused, not race it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from probe import ROOT, classify, record, run, watched

from keme.cli import synthesize_dataset
from keme.dataset import lock
from keme.synth.limits import load_config

pytestmark = pytest.mark.fault

SAMPLE = ROOT / "data/sample"
FIXTURES = ROOT / "tests/fixtures"
NO_VERIFY = ("--no-verify",)  # what is probed is the writing, not the check of the sample
TINY_CONFIG = "name: tiny\nseed: 5\npersonas:\n  - {language: en, start: 2026-05-01, months: 1}\n"
DIRECTORY_LOCK = getattr(lock, "LOCK_FILE", ".keme.lock")
TARGET_LOCK = getattr(lock, "TARGET_LOCK_SUFFIX", ".keme-lock")


@dataclass(frozen=True)
class Command:
    """A command that writes one target: `args(sources, out)` are its arguments; `kind` says what the target
    is (a `dataset` directory written in place, a `site`/`export` directory swapped in whole, a `file`)."""

    name: str
    args: Callable[[Path, Path], list[str]]
    target: str
    kind: str
    replaces: list[str]  # what a second run into an existing target adds to replace it


def _args(*head: str, source: str, option: str | None = None, tail: tuple[str, ...] = ()) -> Callable:
    """keme HEAD [OPTION] SOURCE --out OUT TAIL; SOURCE is a file under the sources directory, or SAMPLE."""

    def build(sources: Path, out: Path) -> list[str]:
        given = str(SAMPLE) if source == "SAMPLE" else str(sources / source)
        return [*head, *([option] if option else []), given, "--out", str(out), *tail]

    return build


COMMANDS = [
    Command("view", _args("view", source="SAMPLE", tail=NO_VERIFY), "site", "site", ["--force"]),
    Command(
        "export-locomo", _args("export", "locomo", source="SAMPLE", tail=NO_VERIFY), "out.json", "file", []
    ),
    Command(
        "export-longmemeval",
        _args("export", "longmemeval", source="SAMPLE", tail=NO_VERIFY),
        "lme.json",
        "file",
        [],
    ),
    Command(
        "export-mobilemem",
        _args("export", "mobilemem", source="SAMPLE", tail=NO_VERIFY),
        "mm.json",
        "file",
        [],
    ),
    Command("export-hf", _args("export", "hf", source="SAMPLE", tail=NO_VERIFY), "hf", "export", ["--force"]),
    Command(
        "import-locomo", _args("import", "locomo", source="locomo_mini.json"), "ds", "dataset", ["--force"]
    ),
    Command(
        "import-longmemeval",
        _args("import", "longmemeval", source="longmemeval_mini.json"),
        "ds",
        "dataset",
        ["--force"],
    ),
    Command(
        "import-mobilemem",
        _args("import", "mobilemem", source="mobilemem_published.json"),
        "ds",
        "dataset",
        ["--force"],
    ),
    Command(
        "import-mobilemem-omni",
        _args("import", "mobilemem-omni", source="omni_release"),
        "ds",
        "dataset",
        ["--force"],
    ),
    Command("synth", _args("synth", source="tiny.yaml", option="--config"), "ds", "dataset", ["--force"]),
    Command(
        "hardneg", _args("hardneg", source="SAMPLE", tail=("--sample", "2")), "hard", "dataset", ["--force"]
    ),
]
BY_NAME = {c.name: c for c in COMMANDS}


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """The inputs of the imports and of synth, in one directory of their own."""
    root = tmp_path_factory.mktemp("sources")
    for name in ("locomo_mini.json", "longmemeval_mini.json", "mobilemem_published.json"):
        shutil.copy(FIXTURES / name, root / name)
    shutil.copytree(FIXTURES / "omni_release", root / "omni_release")
    (root / "tiny.yaml").write_text(TINY_CONFIG, encoding="utf-8")
    return root


def argv(command: Command, sources: Path, out: Path, *extra: str) -> list[str]:
    return ["keme", *command.args(sources, out), *extra]


# ---------------------------------------------------------------- decoys


def sibling_names(target: str) -> list[str]:
    """Names beside `target` a command might stage, swap or lock at: read from the code, and generic ones."""
    from_code = [
        f"{target}.tmp-site",
        f"{target}.old-site",
        f".{target}.partial-0a1b2c3d",
        f".{target}.replaced-0a1b2c3d",
        f".{target}.keme-abc123xy",
        f".{target}.site.keme-abc123xy",
        f".{target}.old.keme-abc123xy",
        f".{target}.abc123xy.tmp",  # the atomic writer's temporary file (mkstemp)
        f".{target}.tmp",
    ]
    generic = [
        f"{target}{suffix}"
        for suffix in (".tmp", ".old", ".bak", ".new", ".partial", ".staging", ".lock", "~", "-tmp", "-old")
    ] + [f".{target}{suffix}" for suffix in ("", ".old", ".new", ".lock", ".swp", ".partial", ".staging")]
    return list(dict.fromkeys(from_code + generic))


def content(name: str) -> bytes:
    """A decoy's bytes: its own, so a decoy swapped for another is seen."""
    return b"the user's own " + hashlib.sha256(name.encode()).hexdigest().encode() + b"\n"


def plant(where: Path, name: str) -> Path:
    """A user's file at `where/name`; names ending in -site, -tmp, -old, .staging or .partial-* are
    directories holding one (like the site.tmp-site/ that vanished)."""
    path = where / name
    directory = any(m in name for m in ("-site", "-tmp", "-old", ".staging", ".partial-", ".keme-abc"))
    if directory:
        path.mkdir(parents=True)
        (path / "keep.txt").write_bytes(content(path.name))
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content(path.name))
    return path


def intact(decoys: list[Path]) -> None:
    """Every decoy still holds its bytes (the .plan.json decoy: its plan)."""
    for decoy in decoys:
        held = decoy / "keep.txt" if decoy.is_dir() else decoy
        expected = content(decoy.name) if decoy.name != ".plan.json" else None
        assert held.exists(), f"{decoy} is gone"
        if expected is not None:
            assert held.read_bytes() == expected, f"{decoy} was changed"


def _check(result, decoys: list[Path], outcomes: tuple[str, ...]) -> None:
    assert not result.escaped, "\n".join(result.escaped)
    assert result.outcome in outcomes, (
        f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    )
    intact(decoys)


# ---------------------------------------------------------------- decoys beside the target


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_decoys_beside_the_target_survive_a_first_run_and_a_replacing_one(command, sources, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = work / command.target
    decoys = [plant(work, name) for name in sibling_names(command.target)]
    first = watched(argv(command, sources, out), expect="ok", parent=work, own=[out], in_process=True)
    _check(first, decoys, ("ok",))
    assert out.exists()
    again = watched(
        argv(command, sources, out, *command.replaces), expect="ok", parent=work, own=[out], in_process=True
    )
    _check(again, decoys, ("ok",))


NAME_PARTS = st.sampled_from(["tmp", "old", "new", "bak", "site", "partial", "keme", "lock", "stage", "swap"])


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hidden=st.booleans(),
    parts=st.lists(NAME_PARTS, min_size=1, max_size=3),
    joiner=st.sampled_from([".", "-", "_"]),
    directory=st.booleans(),
)
def test_any_plausible_sibling_name_survives_an_export(hidden, parts, joiner, directory, tmp_path_factory):
    work = tmp_path_factory.mktemp("generic")
    out = work / "out.json"
    name = ("." if hidden else "") + "out.json" + joiner + joiner.join(parts)
    decoy = work / name
    if directory:
        decoy.mkdir()
        (decoy / "keep.txt").write_bytes(content(name))
    else:
        decoy.write_bytes(content(name))
    args = ["keme", "export", "mobilemem", str(SAMPLE), "--out", str(out), "--no-verify"]
    result = watched(args, expect="ok", parent=work, own=[out], in_process=True)
    _check(result, [decoy], ("ok",))


# ---------------------------------------------------------------- decoys at the lock's name


def lock_name(command: Command, out: Path) -> Path:
    """Where the command locks its target: inside a dataset directory; beside a file or a swapped
    directory."""
    if command.kind == "dataset":
        return out / DIRECTORY_LOCK
    return out.parent / f".{out.name}{TARGET_LOCK}"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_a_users_file_at_the_locks_name_is_refused_and_kept(command, sources, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = work / command.target
    decoy = plant(work, str(lock_name(command, out).relative_to(work)))
    result = watched(
        argv(command, sources, out), expect="error", parent=work, own=[out], keep=[decoy], in_process=True
    )
    _check(result, [decoy], ("clear",))
    assert str(decoy.name) in result.output.replace("\n", "")


# ---------------------------------------------------------------- decoys inside a dataset directory

DATASETS = [c for c in COMMANDS if c.kind == "dataset"]


def _stage_decoy(out: Path) -> list[Path]:
    """A user's `.keme-stage/` holding a plan that, were it run, would move its qa.jsonl into the dataset."""
    stage = out / ".keme-stage"
    stage.mkdir(parents=True)
    (stage / ".plan.json").write_text(json.dumps({"move": ["qa.jsonl"], "remove": []}), encoding="utf-8")
    (stage / "qa.jsonl").write_bytes(content("qa.jsonl"))
    return [stage / ".plan.json", stage / "qa.jsonl"]


@pytest.mark.parametrize("command", DATASETS, ids=lambda c: c.name)
def test_a_users_stage_directory_inside_the_target_is_refused_and_kept(command, sources, tmp_path):
    out = tmp_path / "work" / command.target
    decoys = _stage_decoy(out)
    result = watched(
        argv(command, sources, out),
        expect="error",
        parent=tmp_path / "work",
        own=[out],
        keep=decoys,
        in_process=True,
    )
    _check(result, decoys, ("clear", "ok"))


@pytest.mark.parametrize("command", DATASETS, ids=lambda c: c.name)
def test_a_users_hidden_files_inside_the_target_are_kept(command, sources, tmp_path):
    out = tmp_path / "work" / command.target
    decoys = [plant(out, name) for name in (".work/identity.json.bak", ".work/notes", ".notes", ".git/HEAD")]
    result = watched(
        argv(command, sources, out),
        expect="ok",
        parent=tmp_path / "work",
        own=[out],
        keep=decoys,
        in_process=True,
    )
    _check(result, decoys, ("clear", "ok"))


def test_a_users_work_directory_is_not_taken_for_synths_checkpoints(sources, tmp_path):
    out = tmp_path / "work" / "ds"
    decoys = [plant(out, ".work/identity.json"), plant(out, ".work/p0.json")]
    result = watched(
        argv(BY_NAME["synth"], sources, out),
        expect="error",
        parent=tmp_path / "work",
        own=[out],
        keep=decoys,
        in_process=True,
    )
    _check(result, decoys, ("clear", "ok"))


# ---------------------------------------------------------------- two runs into one target

# `keme ARGS` in a process whose first os.replace/os.rename into the target (the moment it puts its output in
# place, holding whatever lock it holds) waits until the test lets it go.
PAUSED = r"""
import os, runpy, sys, time
from pathlib import Path

target, control = Path(sys.argv[1]).absolute(), Path(sys.argv[2])
real = {"replace": os.replace, "rename": os.rename}


def pausing(name):
    def call(source, destination, *args, **options):
        into = Path(os.fsdecode(destination)).absolute()
        if (into == target or target in into.parents) and not (control / "ready").exists():
            (control / "ready").write_text(str(os.getpid()))
            while not (control / "go").exists():
                time.sleep(0.05)
        return real[name](source, destination, *args, **options)

    return call


os.replace, os.rename = pausing("replace"), pausing("rename")
sys.argv = ["keme", *sys.argv[3:]]
runpy.run_module("keme.cli", run_name="__main__")
"""
LIMIT = 300  # seconds: a hang guard, not a timing assertion


def _paused(args: list[str], target: Path, control: Path) -> subprocess.Popen:
    control.mkdir()
    environment = os.environ | {"PYTHONPATH": str(ROOT), "COLUMNS": "500"}
    environment.pop("KEME_DEBUG", None)
    return subprocess.Popen(
        [sys.executable, "-c", PAUSED, str(target), str(control), *args[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
    )


def _wait_ready(first: subprocess.Popen, control: Path) -> None:
    """Until the first run is paused at its swap (or has ended, which fails the probe)."""
    import time

    waited = 0.0
    while not (control / "ready").exists():
        if first.poll() is not None or waited > LIMIT:
            first.kill()
            output = first.communicate()[0]
            record("hang" if waited > LIMIT else "crash")
            raise AssertionError(f"the first run never reached its swap:\n{output[-3000:]}")
        time.sleep(0.1)
        waited += 0.1


CONCURRENT = ["view", "export-locomo", "export-hf", "import-locomo", "synth"]  # each kind of target and lock


@pytest.mark.parametrize("name", CONCURRENT)
def test_a_second_run_into_a_target_in_use_is_refused(name, sources, tmp_path):
    command = BY_NAME[name]
    work = tmp_path / "work"
    work.mkdir()
    out = work / command.target
    decoys = [plant(work, n) for n in sibling_names(command.target)[:4]]
    control = tmp_path / "control"
    first = _paused(argv(command, sources, out), out, control)
    try:
        _wait_ready(first, control)
        second = run(argv(command, sources, out), expect="error", in_process=True)
        assert second.outcome == "clear", f"{second.outcome}:\n{second.output[-3000:]}"
        assert "in use" in second.output.replace("\n", ""), second.output[-3000:]
    finally:
        (control / "go").write_text("")
        try:
            output = first.communicate(timeout=LIMIT)[0]
        except subprocess.TimeoutExpired:
            first.kill()
            output, code = first.communicate()[0], None
        else:
            code = first.returncode
    outcome = record(classify(code, output, "ok"))
    assert outcome == "ok", output[-3000:]
    leftovers = sorted(p.name for p in work.iterdir() if p != out and not any(p == d for d in decoys))
    if leftovers:
        record("escape")
    assert not leftovers, leftovers
    intact(decoys)


# ---------------------------------------------------------------- a run directory started over


def _eval(out: Path, limit: str) -> list[str]:
    return [
        "keme",
        "eval",
        "--data",
        str(SAMPLE),
        "--systems",
        "recency",
        "--out",
        str(out),
        "--limit",
        limit,
    ]


def test_a_forced_restart_of_a_run_deletes_only_what_the_run_wrote(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = work / "run"
    beside = [plant(work, name) for name in sibling_names("run")]
    first = watched(_eval(out, "3"), expect="ok", parent=work, own=[out], in_process=True)
    _check(first, beside, ("ok",))
    # the user's own files in the run directory, one of them a folder holding a file a system's logs name
    inside = [plant(out, "notes.txt"), plant(out, "mine/keep.txt"), plant(out, "archive/state")]
    again = watched(
        [*_eval(out, "4"), "--force"], expect="ok", parent=work, own=[out], keep=inside, in_process=True
    )
    _check(again, [*beside, *inside], ("ok",))


# ---------------------------------------------------------------- a dataset rewritten in place


@pytest.fixture(scope="module")
def tiny(sources, tmp_path_factory) -> Path:
    """A one-month dataset (keme qa on it takes a moment, on the sample many)."""
    out = tmp_path_factory.mktemp("tiny") / "ds"
    synthesize_dataset(load_config(sources / "tiny.yaml"), out)
    return out


@pytest.fixture
def dataset(tiny, tmp_path) -> Path:
    """A copy of the tiny dataset, in a directory of its own (keme qa rewrites its questions in place)."""
    shutil.copytree(tiny, tmp_path / "work" / "ds")
    return tmp_path / "work" / "ds"


def test_a_users_hidden_files_inside_a_dataset_survive_its_rewrite(dataset):
    decoys = [plant(dataset, name) for name in (".notes", ".git/HEAD", ".keme-stage.bak", ".qa.jsonl.tmp")]
    result = watched(
        ["keme", "qa", str(dataset)], expect="ok", parent=dataset.parent, own=[dataset], keep=decoys
    )
    _check(result, decoys, ("ok",))


@pytest.mark.parametrize("where", [DIRECTORY_LOCK, ".keme-stage"])
def test_a_users_lock_or_stage_inside_a_dataset_is_refused_by_its_rewrite_and_kept(where, dataset):
    decoys = _stage_decoy(dataset) if where == ".keme-stage" else [plant(dataset, where)]
    result = watched(
        ["keme", "qa", str(dataset)],
        expect="error",
        parent=dataset.parent,
        own=[dataset],
        keep=decoys,
        in_process=True,
    )
    _check(result, decoys, ("clear",))

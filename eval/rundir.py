"""The run directory's identity (run.json): a directory is resumed only by the same run over the same data.

run.json holds what the results depend on (dataset content hash, options, reader, judges, parameters)
and each system's configuration fingerprint. A run whose identity differs is refused unless --force,
which deletes what a run wrote there and nothing else.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from keme.dataset.io import atomic_write_text, dump_json
from keme.errors import KemeError

MARKER = "run.json"
REPORTS = (
    "summary.json",
    "results.jsonl",
    "leaderboard.csv",
    "leaderboard.md",
    "leaderboard.png",
    "judge_calibration.json",
)
LABELS = {"dataset_sha256": "the dataset's content (sha256)"}
SYSTEM_LOGS = ("ingest.jsonl", "retrieve.jsonl", "answer.jsonl", "judge.jsonl", "system.json", "state")
OWNED = ".keme-system"  # written into each system directory a run makes: what --force may delete
OWNED_TEXT = "a system's directory of a keme eval run; --force deletes it\n"


def owned(directory: Path) -> bool:
    """`directory` was made by a run (it holds the mark the run wrote), not merely named like one."""
    mark = directory / OWNED
    try:
        return mark.is_file() and not mark.is_symlink() and mark.read_text(encoding="utf-8") == OWNED_TEXT
    except (OSError, UnicodeDecodeError):
        return False


def system_dirs(out: Path) -> list[Path]:
    """Directories of `out` that hold a system's run (what a run owns besides its reports)."""
    return [child for child in out.iterdir() if child.is_dir() and not child.is_symlink() and owned(child)]


def claim(out: Path, name: str) -> None:
    """Make (or keep) `out/name` as this run's system directory. One that exists without the run's mark is
    a user's, or logs of unknown settings: refused, never used or deleted."""
    directory = out / name
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise KemeError(
            f"{directory}: not a directory keme made for {name}; move it away or choose another --out"
        )
    if directory.is_dir() and not owned(directory):
        if any(directory.iterdir()):
            raise KemeError(
                f"{directory} holds files no keme run marked as its own (a folder of yours, or logs from "
                "a run of unknown settings); move it away or choose another --out"
            )
    directory.mkdir(exist_ok=True)
    if not owned(directory):
        atomic_write_text(directory / OWNED, OWNED_TEXT)


def clear(out: Path) -> None:
    """--force: delete what a run wrote, and nothing else a user may keep there."""
    for child in system_dirs(out):
        shutil.rmtree(child)
    for name in (MARKER, *REPORTS):
        (out / name).unlink(missing_ok=True)


def short(value: Any) -> str:
    """A value for a message: hashes cut to 12 hex digits, long values to 60 characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
        return text[:12] + "…"
    return text if len(text) <= 60 else text[:57] + "..."


def check_places(out: Path, data: Path, systems: list[str]) -> None:
    """The run directory is a directory outside the dataset, and every system's directory stays inside it."""
    if out.exists() and not out.is_dir():
        raise KemeError(f"--out {out}: exists and is not a directory; choose a directory for the run")
    resolved, dataset = out.resolve(), data.resolve()
    if resolved == dataset or dataset in resolved.parents:
        raise KemeError(
            f"--out {out} is inside the dataset {data}; a run writes (and with --force deletes) files "
            "there: choose a directory outside it"
        )
    if not systems:
        raise KemeError("no memory system to evaluate (--systems)")
    for name in systems:
        if not name or name in (".", "..") or any(c in name for c in "/\\\0"):
            raise KemeError(f"memory system name {name!r} cannot name a directory inside {out}")


def open_run(out: Path, identity: dict[str, Any], force: bool) -> dict[str, Any]:
    """run.json for this run: a run directory is resumed only by the same run; --force starts it over."""
    marker = out / MARKER
    previous: Any = None
    if marker.exists():
        try:
            previous = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            previous = "unreadable"
    elif system_dirs(out) or (out / "summary.json").exists():
        previous = "missing"
    if previous is not None:
        if isinstance(previous, dict):
            changed = [key for key in identity if previous.get(key) != identity[key]]
            why = "; ".join(
                f"{LABELS.get(key, key)} was {short(previous.get(key))}, now {short(identity[key])}"
                for key in changed
            )
        else:
            changed, why = ["marker"], f"its {MARKER} is {previous}, so what it holds cannot be told"
        if changed and not force:
            raise KemeError(
                f"{out} holds a run with other settings ({why}); resuming would mix their results: "
                "choose another --out, or pass --force to start over"
            )
        if changed:
            clear(out)
            previous = None
    fingerprints = previous.get("fingerprints", {}) if isinstance(previous, dict) else {}
    state = identity | {"fingerprints": fingerprints if isinstance(fingerprints, dict) else {}}
    atomic_write_text(marker, dump_json(state))
    return state


def check_fingerprint(out: Path, state: dict[str, Any], name: str, fingerprint: str, force: bool) -> None:
    """A system resumed from its logs must be configured as it was when they were written (--force redoes
    it)."""
    before = state["fingerprints"].get(name)
    if before is not None and before != fingerprint:
        if not force:
            raise KemeError(
                f"{out / name} was started by {name} configured otherwise (fingerprint {short(before)}, "
                f"now {short(fingerprint)}); resuming would mix two systems: choose another --out, or pass "
                f"--force to redo {name}"
            )
        if owned(out / name):
            shutil.rmtree(out / name)
    claim(out, name)
    state["fingerprints"][name] = fingerprint
    atomic_write_text(out / MARKER, dump_json(state))

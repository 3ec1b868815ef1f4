"""`keme eval` never scores what `keme validate` refuses: both run the one check (keme.validate.check_dataset
through verified_dataset), so on any tampering they agree, and neither crashes nor hangs.

Each tampering is applied to a copy of data/sample with one screenshot added (shared by a user message,
listed in images.jsonl and the manifest, hashes consistent): symlinks out of the dataset (an image, a part
file, the manifest), links that stay inside, hard links, missing, swapped, resealed, FIFOs and
directories where a file belongs, and the edits that only synthesis's promises catch (an anchor, a
graph). Hypothesis adds random byte flips in any file, resealed or not. Everything runs in process; where
a FIFO stands, a watchdog unblocks a reader that opened it and the probe says it hung. The other consumers
(stats, export, view, hardneg) go through the same function, shown on the case this class began with.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from probe import ROOT, Run, run

pytestmark = pytest.mark.fault

SAMPLE = ROOT / "data/sample"
IMAGE = "images/p01-img001.png"
PNG = b"\x89PNG\r\n\x1a\n" + b"screenshot of a bill" * 8


def rows(root: Path, name: str) -> list[dict]:
    return [
        json.loads(line) for line in (root / name).read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def put(root: Path, name: str, records: list[dict]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    (root / name).write_text(text, encoding="utf-8")


def reseal(root: Path, names: list[str] | None = None) -> None:
    """Recompute the listed files' hashes, counts and sizes (all of them by default), as a forger would."""
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    for name in names or list(manifest["files"]):
        blob = (root / name).read_bytes()
        manifest["files"][name] = {
            "sha256": hashlib.sha256(blob).hexdigest(),
            "records": sum(1 for line in blob.splitlines() if line.strip()) if name.endswith(".jsonl") else 1,
            "bytes": len(blob),
        }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def with_screenshot(root: Path) -> None:
    """One screenshot shared by the first user message, recorded and listed, every hash consistent."""
    sessions = rows(root, "sessions.jsonl")
    # a shared app record may stand alone (no user line): the first session the user speaks in
    first = next(s for s in sessions if any(m["role"] == "user" for m in s["messages"]))
    message = next(m for m in first["messages"] if m["role"] == "user")
    message["images"], message["captions"] = [IMAGE], ["a phone bill on screen"]
    put(root, "sessions.jsonl", sessions)
    (root / "images").mkdir()
    (root / IMAGE).write_bytes(PNG)
    record = {
        "id": "p01-img001",
        "persona_id": first["persona_id"],
        "session_id": first["id"],
        "message_id": message["id"],
        "path": IMAGE,
        "sha256": hashlib.sha256(PNG).hexdigest(),
        "template": "bill",
        "language": "en",
        "caption": "a phone bill on screen",
        "facts": {"amount": "42.00"},
        "dom_text": "Phone bill 42.00 due",
        "screen": {},
        "width": 1,
        "height": 1,
    }
    put(root, "images.jsonl", [record])
    reseal(root, ["sessions.jsonl", "images.jsonl", IMAGE])


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("base") / "d"
    shutil.copytree(SAMPLE, root)
    with_screenshot(root)
    return root


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("KEME_DEBUG", raising=False)


# ---------------------------------------------------------------- tamperings
def _outside(root: Path, name: str) -> Path:
    """A copy of `name` outside the dataset, the same bytes (so every hash still matches)."""
    copy = root.parent / f"outside-{name.replace('/', '_')}"
    shutil.copyfile(root / name, copy)
    return copy


def symlink_out(name: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        target = _outside(root, name)
        (root / name).unlink()
        (root / name).symlink_to(target)

    return apply


def _symlink_inside(root: Path) -> None:
    shutil.copyfile(root / IMAGE, root / "images" / "original.png")
    (root / IMAGE).unlink()
    (root / IMAGE).symlink_to("original.png")


def _hard_link_out(root: Path) -> None:
    target = _outside(root, IMAGE)
    (root / IMAGE).unlink()
    os.link(target, root / IMAGE)


def _missing(root: Path) -> None:
    (root / IMAGE).unlink()


def _swapped(root: Path) -> None:
    (root / IMAGE).write_bytes(PNG.replace(b"bill", b"bank"))


def _swapped_resealed(root: Path) -> None:
    _swapped(root)
    reseal(root)


def _dangling(root: Path) -> None:
    (root / IMAGE).unlink()
    (root / IMAGE).symlink_to(root.parent / "gone.png")


def _to_dev_zero(root: Path) -> None:
    (root / IMAGE).unlink()
    (root / IMAGE).symlink_to("/dev/zero")


def _directory(root: Path) -> None:
    (root / IMAGE).unlink()
    (root / IMAGE).mkdir()


def fifo(name: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        (root / name).unlink()
        os.mkfifo(root / name)

    return apply


def _edit_image_record(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        records = rows(root, "images.jsonl")
        change(records[0])
        put(root, "images.jsonl", records)
        reseal(root)

    return apply


def _anchor_altered(root: Path) -> None:
    anchors = rows(root, "anchors.jsonl")
    next(a for a in anchors if "title" in a["record"])["record"]["title"] = "Forged"
    put(root, "anchors.jsonl", anchors)
    reseal(root)


def _graph_child_outside_parent(root: Path) -> None:
    graphs = rows(root, "graphs.jsonl")
    events = graphs[0]["events"]
    leaf = next(e for e in events if e["depth"] == 2)
    leaf["end"] = "2099-01-01T00:00:00"  # past its parent's end
    put(root, "graphs.jsonl", graphs)
    reseal(root)


def _unlisted_image_file(root: Path) -> None:
    """An extra file in images/ that nothing names: not part of the dataset, harmless to both."""
    (root / "images" / "stray.png").write_bytes(b"stray")


TAMPERS: dict[str, Callable[[Path], None]] = {
    "pristine": lambda root: None,
    "image_symlinked_out": symlink_out(IMAGE),
    "image_symlinked_inside": _symlink_inside,
    "image_hard_linked_out": _hard_link_out,
    "image_missing": _missing,
    "image_swapped": _swapped,
    "image_swapped_resealed": _swapped_resealed,
    "image_dangling_symlink": _dangling,
    "image_to_dev_zero": _to_dev_zero,
    "image_is_a_directory": _directory,
    "image_caption_not_shared": _edit_image_record(lambda r: r.update(caption="a forged caption")),
    "image_fact_not_on_page": _edit_image_record(lambda r: r["facts"].update(amount="99.00")),
    "image_path_elsewhere": _edit_image_record(lambda r: r.update(path="images/p01-img002.png")),
    "sessions_symlinked_out": symlink_out("sessions.jsonl"),
    "qa_symlinked_out": symlink_out("qa.jsonl"),
    "images_jsonl_symlinked_out": symlink_out("images.jsonl"),
    "manifest_symlinked_out": symlink_out("manifest.json"),
    "anchor_altered_resealed": _anchor_altered,
    "graph_child_outside_parent_resealed": _graph_child_outside_parent,
    "stray_file_in_images": _unlisted_image_file,
}
ACCEPTED = {"pristine", "image_symlinked_inside", "image_hard_linked_out", "stray_file_in_images"}
FIFOS: dict[str, str] = {
    "image_is_a_fifo": IMAGE,
    "sessions_is_a_fifo": "sessions.jsonl",
    "manifest_is_a_fifo": "manifest.json",
}


def tampered(base: Path, tmp: Path, tamper: Callable[[Path], None]) -> Path:
    root = tmp / "d"
    shutil.copytree(base, root, symlinks=True)
    tamper(root)
    return root


def verdicts(root: Path, out: Path) -> tuple[Run, Run]:
    """`keme validate` and `keme eval` on one directory, in process, each classified as the probe does."""
    checked = run(["keme", "validate", str(root)], expect="ok", in_process=True)
    scored = run(
        ["keme", "eval", "--data", str(root), "--systems", "bm25", "--out", str(out), "--limit", "1"],
        expect="ok",
        in_process=True,
    )
    return checked, scored


def assert_agree(checked: Run, scored: Run) -> None:
    for what, result in (("validate", checked), ("eval", scored)):
        assert result.outcome in ("ok", "clear"), f"{what}: {result.outcome}\n{result.output[-3000:]}"
    assert checked.outcome == scored.outcome, (
        f"validate {checked.outcome}, eval {scored.outcome}:\n{checked.output[-1500:]}\n"
        + scored.output[-1500:]
    )
    if scored.outcome == "ok":
        summary = json.loads(Path(scored.stdout and _out_of(scored)).read_text(encoding="utf-8"))
        assert summary["verified"] is True


def _out_of(scored: Run) -> str:
    return scored.stdout.split("reports in ", 1)[1].split(":", 1)[0].strip() + "/summary.json"


# ---------------------------------------------------------------- the property, case by case
@pytest.mark.parametrize("name", list(TAMPERS))
def test_eval_refuses_exactly_what_validate_refuses(base, tmp_path, name):
    root = tampered(base, tmp_path, TAMPERS[name])
    checked, scored = verdicts(root, tmp_path / "run")
    assert_agree(checked, scored)
    assert (checked.outcome == "ok") == (name in ACCEPTED), checked.output[-3000:]


@contextmanager
def unblocked(path: Path, seconds: float = 60) -> Iterator[threading.Event]:
    """Run in process while a watchdog opens the FIFO at `path` for writing after `seconds` (a reader blocked
    on it gets end of file) and sets the event it yields: set means a command opened the FIFO and hung."""
    hung, done = threading.Event(), threading.Event()

    def watch() -> None:
        if not done.wait(seconds):
            hung.set()
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # nobody is reading
                pass

    watchdog = threading.Thread(target=watch, daemon=True)
    watchdog.start()
    try:
        yield hung
    finally:
        done.set()
        watchdog.join()


@pytest.mark.parametrize("name", list(FIFOS))
def test_a_fifo_in_the_dataset_is_refused_by_both_without_hanging(base, tmp_path, name):
    root = tampered(base, tmp_path, fifo(FIFOS[name]))
    with unblocked(root / FIFOS[name]) as hung:
        checked, scored = verdicts(root, tmp_path / "run")
    assert not hung.is_set(), "a command opened the FIFO and waited for a writer"
    assert_agree(checked, scored)
    assert checked.outcome == "clear" and "not a regular file" in " ".join(scored.output.split())


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(
        ["personas.jsonl", "sessions.jsonl", "qa.jsonl", "images.jsonl", "anchors.jsonl", IMAGE]
    ),
    where=st.floats(0, 1, exclude_max=True),
    byte=st.integers(0, 255),
    resealed=st.booleans(),
)
def test_a_flipped_byte_anywhere_gets_the_same_verdict(base, name, where, byte, resealed):
    with tempfile.TemporaryDirectory() as tmp:
        root = tampered(base, Path(tmp), lambda r: None)
        data = bytearray((root / name).read_bytes())
        data[int(where * len(data))] = byte
        (root / name).write_bytes(bytes(data))
        if resealed:
            reseal(root)
        assert_agree(*verdicts(root, Path(tmp) / "run"))


# ---------------------------------------------------------------- every consumer, the same check
CONSUMERS: dict[str, Callable[[Path, Path], list[str]]] = {
    "stats": lambda root, tmp: ["keme", "stats", str(root)],
    "export locomo": lambda root, tmp: ["keme", "export", "locomo", str(root), "--out", str(tmp / "x.json")],
    "export hf": lambda root, tmp: ["keme", "export", "hf", str(root), "--out", str(tmp / "hf")],
    "view": lambda root, tmp: ["keme", "view", str(root), "--out", str(tmp / "site")],
    "hardneg": lambda root, tmp: ["keme", "hardneg", str(root), "--out", str(tmp / "hard"), "--sample", "1"],
}


@pytest.mark.parametrize("consumer", list(CONSUMERS))
def test_every_consumer_refuses_an_image_symlinked_out(base, tmp_path, consumer):
    root = tampered(base, tmp_path, TAMPERS["image_symlinked_out"])
    result = run(CONSUMERS[consumer](root, tmp_path), expect="error", in_process=True)
    assert result.outcome == "clear", f"{result.outcome}:\n{result.output[-3000:]}"
    assert "leaves the dataset" in " ".join(result.output.split())

"""Data from a file never becomes a path: hostile ids and image paths, through the loader, every system and
eval.

The attack this guards against: an imported `sample_id` / `question_id` such
as `../../victim` became a file name, `keme eval` wrote outside its run
directory and emptied an unrelated Memory Bank database. Each probe plants a
sentinel (a SQLite database with 8 rows, a directory with a file) next to
the directories the toolkit may write, and checks that it is unchanged and
that no file appeared anywhere else.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from probe import ROOT, raises_clearly, record, refuses, works

from eval.contract import Query
from keme.dataset import Dataset
from keme.dataset.paths import scope_path
from keme.errors import KemeError
from keme.models import Message, Session
from keme.validate import validate

pytestmark = pytest.mark.fault

HOSTILE = {
    "parent": "../victim",
    "parent2": "../../victim",
    "parent3": "../../../victim",
    "parent4": "../../../../victim",
    "absolute": "/tmp/keme-victim",
    "slash": "a/b",
    "dotdot": "..",
    "dot": ".",
    "empty": "",
    "nul": "a\x00b",
    "long": "x" * 5000,
    "windows": "..\\..\\victim",
    "lookalike": "vісtim",
    "hidden": ".victim",
    "glob": "v*[ab]?",
    "newline": "a\nb",
    "surrogate": "\udc00victim",
}


# -- sentinels: what must not change


def plant(where: Path) -> None:
    """A Memory Bank-like database with 8 rows and a directory with a file, both named 'victim'."""
    where.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(where / "victim.sqlite") as db:
        db.execute("CREATE TABLE semantic (id TEXT)")
        db.executemany("INSERT INTO semantic VALUES (?)", [(f"e{i}",) for i in range(8)])
    (where / "victim").mkdir(exist_ok=True)
    (where / "victim" / "keep.txt").write_text("keep")


def intact(where: Path) -> bool:
    with sqlite3.connect(where / "victim.sqlite") as db:
        rows = db.execute("SELECT COUNT(*) FROM semantic").fetchone()[0]
    return rows == 8 and sorted(p.name for p in (where / "victim").iterdir()) == ["keep.txt"]


def files_under(top: Path) -> set[Path]:
    return {p for p in top.rglob("*") if p.is_file()}


def only_inside(new: set[Path], *allowed: Path) -> list[Path]:
    """The new files that are not under any of `allowed` (what escaped)."""
    roots = [a.resolve() for a in allowed]
    return sorted(p for p in new if not any(r == p.resolve() or r in p.resolve().parents for r in roots))


# -- 1. the loader refuses hostile ids and image paths in a dataset


def _dataset(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "data/sample", tmp_path / "ds")
    return tmp_path / "ds"


def _replace(path: Path, old: str, new_value: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new_value, 1), encoding="utf-8")


ID_FIELDS = {  # file, the JSON text to replace (a key and its value), the key
    "persona_id": ("personas.jsonl", '"id":"p01"', '"id":'),
    "session_id": ("sessions.jsonl", '"id":"p01-s0001"', '"id":'),
    "message_id": ("sessions.jsonl", '"id":"p01-s0001-m01"', '"id":'),
    "qa_id": ("qa.jsonl", '"id":"p01-q0001"', '"id":'),
    "evidence_id": ("qa.jsonl", '"evidence":["', '"evidence":['),
    "event_id": ("graphs.jsonl", '"id":"p01-c01"', '"id":'),
    "anchor_id": ("anchors.jsonl", '"id":"p01-a001"', '"id":'),
}


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
@pytest.mark.parametrize("field", sorted(ID_FIELDS))
def test_the_loader_refuses_a_hostile_id(tmp_path, field, hostile):
    data = _dataset(tmp_path)
    name, old, key = ID_FIELDS[field]
    value = json.dumps(HOSTILE[hostile])
    _replace(data / name, old, key + value + ("," + '"' if old.endswith('["') else ""))
    raises_clearly(lambda: Dataset.load(data), KemeError, match=rf"{name}:\d+")


def test_a_hostile_id_is_named_with_its_file_line_and_reason(tmp_path):
    data = _dataset(tmp_path)
    _replace(data / "personas.jsonl", '"id":"p01"', '"id":"../../victim"')
    exc = raises_clearly(lambda: Dataset.load(data), KemeError)
    assert "personas.jsonl:1" in str(exc) and "'../../victim'" in str(exc) and "path separator" in str(exc)


def test_validate_reports_a_hostile_id(tmp_path):
    data = _dataset(tmp_path)
    _replace(data / "sessions.jsonl", '"id":"p01-s0001"', '"id":"../../victim"')
    refuses(["keme", "validate", str(data)], match=r"sessions\.jsonl:1.*'\.\./\.\./victim'")


IMAGE_PATHS = {
    "etc_passwd": "../../../../etc/passwd",
    "absolute": "/etc/passwd",
    "climb": "images/../../x.png",
    "windows": "images\\..\\..\\x.png",
    "outside_images": "personas.jsonl",
    "hidden": "images/.x.png",
    "nul": "images/a\x00.png",
    "empty": "",
}


def _with_image(data: Path, path: str, target: Path | None = None) -> None:
    """Share one image in the first message and list it in images.jsonl, with hashes made consistent."""
    sessions = [
        json.loads(line) for line in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    message = sessions[0]["messages"][0]
    message["images"], message["captions"] = [path], ["a screenshot"]
    (data / "sessions.jsonl").write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions))
    content = target.read_bytes() if target is not None else b""
    image = {
        "id": "p01-img001",
        "persona_id": "p01",
        "session_id": sessions[0]["id"],
        "message_id": message["id"],
        "path": path,
        "sha256": hashlib.sha256(content).hexdigest(),
        "template": "note",
        "language": "en",
        "caption": "a screenshot",
        "facts": {},
        "dom_text": "",
        "screen": {},
        "width": 1,
        "height": 1,
    }
    (data / "images.jsonl").write_text(json.dumps(image) + "\n")
    manifest = json.loads((data / "manifest.json").read_text())
    for name in ("sessions.jsonl", "images.jsonl"):
        blob = (data / name).read_bytes()
        manifest["files"][name] = {
            "sha256": hashlib.sha256(blob).hexdigest(),
            "records": blob.count(b"\n"),
            "bytes": len(blob),
        }
    (data / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("case", sorted(IMAGE_PATHS))
def test_the_loader_refuses_an_image_path_outside_images(tmp_path, case):
    data = _dataset(tmp_path)
    _with_image(data, IMAGE_PATHS[case])
    raises_clearly(lambda: Dataset.load(data), KemeError, match=r"(sessions|images)\.jsonl:1.*image path")


def test_validate_refuses_etc_passwd_made_consistent(tmp_path):
    data = _dataset(tmp_path)
    _with_image(data, "../../../../etc/passwd", Path("/etc/passwd"))
    refuses(
        ["keme", "validate", str(data)],
        match=r"image path '\.\./\.\./\.\./\.\./etc/passwd' is not under images/",
    )


def test_eval_refuses_an_image_path_outside_images(tmp_path):
    data = _dataset(tmp_path)
    _with_image(data, "/etc/passwd")
    refuses(
        ["keme", "eval", "--data", str(data), "--systems", "bm25", "--out", str(tmp_path / "run")],
        match="image path '/etc/passwd'",
    )


def test_validate_refuses_an_image_that_is_a_symlink_out_of_the_dataset(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    data = _dataset(tmp_path)
    (data / "images").mkdir()
    (data / "images" / "p01-img001.png").symlink_to(secret)
    _with_image(data, "images/p01-img001.png", secret)
    violations = validate(data)
    record("clear" if any("leaves the dataset" in str(v) for v in violations) else "silent")
    assert any("leaves the dataset" in str(v) for v in violations), violations


def test_a_manifest_listing_a_file_outside_the_dataset_is_refused(tmp_path):
    data = _dataset(tmp_path)
    manifest = json.loads((data / "manifest.json").read_text())
    blob = Path("/etc/hostname").read_bytes() if Path("/etc/hostname").exists() else b""
    manifest["files"]["../../../../etc/hostname"] = {
        "sha256": hashlib.sha256(blob).hexdigest(),
        "records": 1,
        "bytes": len(blob),
    }
    (data / "manifest.json").write_text(json.dumps(manifest))
    refuses(["keme", "validate", str(data)], match=r"manifest.*'\.\./\.\./\.\./\.\./etc/hostname'")


# -- 2. every memory system keeps a hostile scope inside its root (defence in depth)


class Bag:
    """A tiny deterministic embedder, so OpenClaw runs without loading MiniLM."""

    name = "bag"

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray([[t.count("a") + 1.0, t.count("e") + 1.0] for t in texts], dtype=np.float32)


def _system(name: str, root: Path):
    if name == "memory_bank":
        from baselines.memory_bank.system import MemoryBankSystem

        return MemoryBankSystem(root=root)
    if name == "factmem":
        from baselines.factmem.system import FactMem

        return FactMem(root=root)
    if name == "openclaw":
        from baselines.openclaw import OpenClaw

        return OpenClaw(root=root, embedder=Bag())
    from eval.registry import create

    return create(name)


def _session() -> Session:
    start = datetime(2024, 3, 1, 9)
    texts = ["I moved to Lisbon last week.", "My sister's name is Ana.", "I prefer tea over coffee."]
    messages = [
        Message(id=f"s1-m{i}", role="user", content=text, timestamp=start + timedelta(minutes=i))
        for i, text in enumerate(texts)
    ]
    return Session(
        id="s1",
        persona_id="p01",
        event_id="e1",
        language="en",
        pattern="t",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
@pytest.mark.parametrize("system", ["memory_bank", "factmem", "openclaw", "vibebrowser"])
def test_a_system_keeps_a_hostile_scope_inside_its_root(tmp_path, system, hostile):
    scope = HOSTILE[hostile]
    work = tmp_path / "a" / "b" / "c" / "d"  # deep enough that ../../../../victim lands next to the sentinel
    root, state = work / "root", work / "run" / "state"
    plant(tmp_path)
    plant(work)
    before = files_under(tmp_path)
    memory = _system(system, root)
    try:
        memory.reset(scope)
        memory.ingest(scope, _session())
        memory.flush(scope)
        hits = memory.retrieve(scope, Query(text="Where did I move?", now=datetime(2024, 4, 1)), 5).hits
        target = scope_path(state, scope)
        memory.save(scope, target)
        memory.load(scope, target)
        again = memory.retrieve(scope, Query(text="Where did I move?", now=datetime(2024, 4, 1)), 5).hits
    except KemeError:
        record("clear")  # refusing a hostile scope is fine too
        return
    except Exception as exc:  # noqa: BLE001 - the probe classifies it
        record("crash")
        raise AssertionError(f"crash: {type(exc).__name__}: {exc}") from exc
    finally:
        getattr(memory, "close", lambda: None)()
    escaped = only_inside(files_under(tmp_path) - before, root, state)
    ok = (
        not escaped
        and intact(tmp_path)
        and intact(work)
        and hits
        and [h.text for h in again] == [h.text for h in hits]
    )
    record("ok" if ok else "silent")
    assert not escaped, escaped
    assert intact(tmp_path) and intact(work)
    assert hits and [h.text for h in again] == [h.text for h in hits]


def test_two_hostile_scopes_never_share_a_store(tmp_path):
    from baselines.memory_bank.system import MemoryBankSystem

    memory = MemoryBankSystem(root=tmp_path / "root")
    memory.ingest("a/b", _session())
    memory.flush("a/b")
    empty = memory.size("a_b") == 0
    memory.close()
    record("ok" if empty else "silent")
    assert empty


# -- 3. end to end: a hostile LoCoMo and LongMemEval file, imported and evaluated with memory_bank


def _hostile_locomo(path: Path) -> None:
    samples = []
    for number, (case, sample_id) in enumerate(sorted(HOSTILE.items()), start=1):
        conversation = {"speaker_a": "Ann", "speaker_b": "Bob"}
        for s in (1, 2):
            conversation[f"session_{s}_date_time"] = f"10:0{s} am on {s} May, 2023"
            conversation[f"session_{s}"] = [
                {
                    "speaker": "Ann",
                    "dia_id": f"D{s}:1",
                    "text": f"In session {s} I ({case}) adopted cat number {number}.",
                },
                {"speaker": "Bob", "dia_id": f"D{s}:2", "text": f"Lovely, {case}! What is its name?"},
            ]
        samples.append(
            {
                "sample_id": sample_id,
                "conversation": conversation,
                "qa": [
                    {
                        "question": f"Which cat did {case} adopt?",
                        "answer": f"number {number}",
                        "evidence": ["D1:1"],
                        "category": 4,
                    }
                ],
            }
        )
    path.write_text(json.dumps(samples), encoding="utf-8")


def _hostile_longmemeval(path: Path) -> None:
    instances = []
    for number, (case, qid) in enumerate(sorted(HOSTILE.items()), start=1):
        session_ids = [qid, f"{qid}/../x"]
        instances.append(
            {
                "question_id": qid,
                "question_type": "single-session-user",
                "question": f"Where does {case} work?",
                "answer": f"Acme {number}",
                "question_date": "2023/05/30 (Tue) 23:40",
                "haystack_session_ids": session_ids,
                "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/25 (Thu) 10:02"],
                "haystack_sessions": [
                    [
                        {"role": "user", "content": f"{case}: I work at Acme {number}", "has_answer": True},
                        {"role": "assistant", "content": f"Noted, {case}."},
                    ],
                    [
                        {"role": "user", "content": f"{case}: any tips for a trip?"},
                        {"role": "assistant", "content": f"Pack light, {case}."},
                    ],
                ],
                "answer_session_ids": [qid],
            }
        )
    path.write_text(json.dumps(instances), encoding="utf-8")


@pytest.mark.parametrize("fmt", ["locomo", "longmemeval"])
def test_a_hostile_benchmark_evaluated_with_memory_bank_writes_only_into_its_run(tmp_path, fmt):
    # the run lives here; ../ chains from it and its state land on sentinels
    work = tmp_path / "w1" / "w2" / "w3"
    plant(tmp_path)
    # none inside run/memory_bank: eval refuses a system folder holding files no run marked
    for level in (work, work / "run", tmp_path / "w1", tmp_path / "w1" / "w2"):
        plant(level)
    source = tmp_path / f"{fmt}.json"
    (_hostile_locomo if fmt == "locomo" else _hostile_longmemeval)(source)
    data = work / "data"
    works(["keme", "import", fmt, str(source), "--out", str(data)])
    assert validate(data) == []
    temp = tmp_path / "tmp"
    temp.mkdir()
    before = files_under(tmp_path)
    run = work / "run"
    works(
        ["keme", "eval", "--data", str(data), "--systems", "memory_bank", "--out", str(run)],
        env={"TMPDIR": str(temp)},
    )
    new = files_under(tmp_path) - before
    escaped = only_inside(new, run, *temp.glob("memory-bank-*"))
    sentinels = [tmp_path, work, tmp_path / "w1", tmp_path / "w1" / "w2"]
    ok = not escaped and all(intact(s) for s in sentinels) and (run / "summary.json").exists()
    record("ok" if ok else "silent")
    assert not escaped, escaped
    assert all(intact(s) for s in sentinels)
    summary = json.loads((run / "summary.json").read_text())
    assert summary  # a run that scored the imported questions


def test_eval_refuses_a_hand_made_dataset_with_a_hostile_id(tmp_path):
    plant(tmp_path)
    data = _dataset(tmp_path)
    for name in ("personas.jsonl", "sessions.jsonl", "qa.jsonl", "graphs.jsonl", "anchors.jsonl"):
        path = data / name
        path.write_text(
            path.read_text(encoding="utf-8").replace('"p01"', '"../../../victim"'), encoding="utf-8"
        )
    before = files_under(tmp_path)
    refuses(
        [
            "keme",
            "eval",
            "--data",
            str(data),
            "--systems",
            "memory_bank",
            "--out",
            str(tmp_path / "x" / "run"),
        ],
        match=r"'\.\./\.\./\.\./victim'",
    )
    assert intact(tmp_path) and not (files_under(tmp_path) - before)

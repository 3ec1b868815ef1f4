"""Tampered and corrupt datasets: `keme eval` scores only data it has checked.

Each kind of damage is applied to a copy of data/sample and run through `keme eval` (it must refuse,
naming the problem), `keme validate` (exit 1, naming it among every violation), `keme stats` and
`keme export locomo` (a clear refusal), and `keme qa` (a refusal, or a rebuild when only qa.jsonl was
damaged). Most content kinds are *resealed*: the manifest hashes are recomputed after the edit, as a
careful forger would, so only the deeper checks (ids, references, time order, QA proofs) can catch them.

The commands run in process (tests/faults/inprocess.py: the same `keme.cli.main` boundary, without an
interpreter start and resource loading per probe); a few run as real subprocesses too.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from probe import ROOT, refused, refuses, worked, works

pytestmark = pytest.mark.fault

SAMPLE = ROOT / "data/sample"
WIDE = {"COLUMNS": "400"}  # one message, one line: rich wraps at the terminal width


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("KEME_DEBUG", raising=False)


# ---------------------------------------------------------------- editing a dataset
def rows(root: Path, name: str) -> list[dict]:
    return [
        json.loads(line) for line in (root / name).read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def put(root: Path, name: str, records: list[dict]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    (root / name).write_text(text, encoding="utf-8")


def edit(root: Path, name: str, change: Callable[[list[dict]], object]) -> None:
    records = rows(root, name)
    change(records)
    put(root, name, records)


def manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text(encoding="utf-8"))


def put_manifest(root: Path, data: dict) -> None:
    (root / "manifest.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def reseal(root: Path) -> None:
    """Recompute every listed file's hash, count and size: the edit is now invisible to the manifest check."""
    import hashlib

    data = manifest(root)
    for name, entry in data["files"].items():
        blob = (root / name).read_bytes()
        entry["sha256"] = hashlib.sha256(blob).hexdigest()
        entry["records"] = sum(1 for line in blob.splitlines() if line.strip())
        entry["bytes"] = len(blob)
    put_manifest(root, data)


def evidence_message(root: Path) -> tuple[dict, str]:
    """A question whose proof quotes text from an evidence message, and that message's id."""
    for item in rows(root, "qa.jsonl"):
        for quote in item["proof"]["quotes"]:
            if quote.get("text") and quote["message_id"] in item["evidence"]:
                return item, quote["message_id"]
    raise AssertionError("the sample has no quoted evidence")


def _edit_message(root: Path, message_id: str, change: Callable[[dict, list], None]) -> None:
    def apply(sessions: list[dict]) -> None:
        for session in sessions:
            for message in session["messages"]:
                if message["id"] == message_id:
                    change(message, session["messages"])
                    return

    edit(root, "sessions.jsonl", apply)


def _first(records: list[dict], **where) -> dict:
    return next(r for r in records if all(r.get(k) == v for k, v in where.items()))


# ---------------------------------------------------------------- the kinds of damage
@dataclass(frozen=True)
class Tamper:
    name: str
    apply: Callable[[Path], None]
    match: str  # what the refusal must say (eval and validate)
    qa_rebuilds: bool = False  # only qa.jsonl is damaged: `keme qa` rebuilds it instead of refusing
    stats_works: bool = False  # the counts do not rest on what was damaged


def _sha(root):
    data = manifest(root)
    data["files"]["sessions.jsonl"]["sha256"] = "0" * 64
    put_manifest(root, data)


def _count(root):
    data = manifest(root)
    data["files"]["sessions.jsonl"]["records"] += 1
    put_manifest(root, data)


def _listed_missing(root):
    (root / "graphs.jsonl").unlink()


def _sessions_missing(root):
    (root / "sessions.jsonl").unlink()


def _manifest_missing(root):
    (root / "manifest.json").unlink()


def _manifest_not_json(root):
    (root / "manifest.json").write_text('{"name": "sample", "files": {', encoding="utf-8")


def _manifest_utf8(root):
    (root / "manifest.json").write_bytes(b'{"name": "sam\xffple", "files": {}}')


def _manifest_list(root):
    (root / "manifest.json").write_text("[1, 2, 3]\n", encoding="utf-8")


def _manifest_no_files(root):
    data = manifest(root)
    del data["files"]
    put_manifest(root, data)


def _manifest_escape(root):
    data = manifest(root)
    data["files"]["../../outside.jsonl"] = {"sha256": "0" * 64, "records": 1, "bytes": 1}
    put_manifest(root, data)


def _manifest_dir(root):
    (root / "manifest.json").unlink()
    (root / "manifest.json").mkdir()


def _unlisted(root):
    data = manifest(root)
    del data["files"]["qa.jsonl"]
    put_manifest(root, data)


def _edited_message(root):
    _, message_id = evidence_message(root)
    _edit_message(root, message_id, lambda m, _: m.update(content="Nothing to see here."))


def _edited_message_resealed(root):
    _edited_message(root)
    reseal(root)


def _deleted_message(root):
    _, message_id = evidence_message(root)
    _edit_message(root, message_id, lambda m, messages: messages.remove(m))
    reseal(root)


def _dangling_evidence(root):
    edit(root, "qa.jsonl", lambda items: items[0]["evidence"].append("ghost-message"))
    reseal(root)


def _dangling_evidence_session(root):
    edit(root, "qa.jsonl", lambda items: items[0]["evidence_sessions"].append("ghost-session"))
    reseal(root)


def _dangling_sub_question(root):
    edit(root, "qa.jsonl", lambda items: items[0]["sub_questions"].append("ghost-question"))
    reseal(root)


def _foreign_evidence(root):
    sessions = rows(root, "sessions.jsonl")

    def change(items):
        item = items[0]
        other = next(s for s in sessions if s["persona_id"] != item["persona_id"])
        item["evidence"].append(other["messages"][0]["id"])

    edit(root, "qa.jsonl", change)
    reseal(root)


def _unknown_persona_question(root):
    edit(root, "qa.jsonl", lambda items: items[0].update(persona_id="ghost-persona"))
    reseal(root)


def _duplicate_persona(root):
    edit(root, "personas.jsonl", lambda personas: personas.append(dict(personas[0])))
    reseal(root)


def _duplicate_session(root):
    edit(root, "sessions.jsonl", lambda sessions: sessions[1].update(id=sessions[0]["id"]))
    reseal(root)


def _duplicate_message(root):
    edit(
        root,
        "sessions.jsonl",
        lambda sessions: sessions[1]["messages"][0].update(id=sessions[0]["messages"][0]["id"]),
    )
    reseal(root)


def _duplicate_question(root):
    edit(root, "qa.jsonl", lambda items: items[1].update(id=items[0]["id"]))
    reseal(root)


def _no_sessions(root):
    (root / "sessions.jsonl").write_text("", encoding="utf-8")
    reseal(root)


def _no_questions(root):
    (root / "qa.jsonl").write_text("", encoding="utf-8")
    reseal(root)


def _persona_without_sessions(root):
    persona = rows(root, "personas.jsonl")[1]["id"]
    edit(
        root,
        "sessions.jsonl",
        lambda sessions: sessions.__setitem__(
            slice(None), [s for s in sessions if s["persona_id"] != persona]
        ),
    )
    reseal(root)


def _unknown_persona_session(root):
    edit(root, "sessions.jsonl", lambda sessions: sessions[0].update(persona_id="ghost-persona"))
    reseal(root)


def _out_of_order(root):
    def change(sessions):
        messages = next(s for s in sessions if len(s["messages"]) > 2)["messages"]
        messages[1]["timestamp"], messages[2]["timestamp"] = (
            messages[2]["timestamp"],
            messages[1]["timestamp"],
        )

    edit(root, "sessions.jsonl", change)
    reseal(root)


def _asked_too_early(root):
    persona = rows(root, "personas.jsonl")[0]

    def change(items):
        item = _first(items, persona_id=persona["id"])
        item["asked_at"] = (datetime.fromisoformat(persona["start"]) - timedelta(days=30)).isoformat()

    edit(root, "qa.jsonl", change)
    reseal(root)


def _gold_changed(root):
    def change(items):
        item = next(i for i in items if i["spec"]["kind"] == "entity" and i["spec"]["value"])
        item["spec"]["value"] = item["answer"] = "Atlantis"

    edit(root, "qa.jsonl", change)
    reseal(root)


def _truncated(root):
    blob = (root / "sessions.jsonl").read_bytes().rstrip(b"\n")
    (root / "sessions.jsonl").write_bytes(blob[: len(blob) - 200])
    reseal(root)


def _invalid_utf8(name: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        lines = (root / name).read_bytes().splitlines(keepends=True)
        lines[0] = lines[0][:40] + b"\xff\xfe" + lines[0][40:]
        (root / name).write_bytes(b"".join(lines))
        reseal(root)

    return apply


def _empty_file(root):
    (root / "sessions.jsonl").write_bytes(b"")


def _wrong_json_type(root):
    lines = (root / "qa.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "[1, 2, 3]\n"
    (root / "qa.jsonl").write_text("".join(lines), encoding="utf-8")
    reseal(root)


def _wrong_field_type(root):
    edit(root, "qa.jsonl", lambda items: items[0].update(evidence="not-a-list"))
    reseal(root)


def _unknown_field(root):
    edit(root, "personas.jsonl", lambda personas: personas[0].update(favourite_colour="teal"))
    reseal(root)


def _null_field(root):
    edit(root, "qa.jsonl", lambda items: items[0].update(question=None))
    reseal(root)


def _lone_surrogate(root):
    text = (root / "sessions.jsonl").read_text(encoding="utf-8")
    (root / "sessions.jsonl").write_text(
        text.replace('"content":"', '"content":"\\ud800', 1), encoding="utf-8"
    )
    reseal(root)


TAMPERS = [
    Tamper("manifest_hash_mismatch", _sha, r"sessions\.jsonl.*SHA-256 differs"),
    Tamper("record_count_mismatch", _count, r"sessions\.jsonl.*records, manifest says"),
    Tamper("listed_file_missing", _listed_missing, r"graphs\.jsonl.*listed in the manifest but missing"),
    Tamper("sessions_file_missing", _sessions_missing, r"sessions\.jsonl.*(missing|no sessions)"),
    Tamper("manifest_missing", _manifest_missing, r"no manifest"),
    Tamper("manifest_not_json", _manifest_not_json, r"manifest\.json.*not valid JSON"),
    Tamper("manifest_invalid_utf8", _manifest_utf8, r"manifest\.json.*not valid UTF-8"),
    Tamper("manifest_not_an_object", _manifest_list, r"manifest\.json.*expected a JSON object"),
    Tamper("manifest_without_files", _manifest_no_files, r"manifest\.json.*files: Field required"),
    Tamper("manifest_file_name_escapes", _manifest_escape, r"manifest\.json.*inside the dataset"),
    Tamper("manifest_is_a_directory", _manifest_dir, r"manifest\.json.*cannot read"),
    Tamper(
        "data_file_not_in_manifest", _unlisted, r"qa\.jsonl.*not listed in the manifest", qa_rebuilds=True
    ),
    Tamper("edited_evidence_message", _edited_message, r"sessions\.jsonl.*SHA-256 differs"),
    Tamper("edited_evidence_message_resealed", _edited_message_resealed, r"no longer says"),
    Tamper("deleted_evidence_message", _deleted_message, r"evidence messages \[.*\] do not exist"),
    Tamper("dangling_evidence_ids", _dangling_evidence, r"ghost-message.*do not exist", qa_rebuilds=True),
    Tamper(
        "dangling_evidence_session_ids",
        _dangling_evidence_session,
        r"ghost-session.*do not exist",
        qa_rebuilds=True,
    ),
    Tamper(
        "dangling_sub_question_ids", _dangling_sub_question, r"ghost-question.*do not exist", qa_rebuilds=True
    ),
    Tamper("evidence_of_another_persona", _foreign_evidence, r"belong to another persona", qa_rebuilds=True),
    Tamper(
        "question_for_unknown_persona",
        _unknown_persona_question,
        r"unknown persona ghost-persona",
        qa_rebuilds=True,
    ),
    Tamper("duplicate_personas", _duplicate_persona, r"duplicate persona id"),
    Tamper("duplicate_session_ids", _duplicate_session, r"duplicate session id"),
    Tamper("duplicate_message_ids", _duplicate_message, r"duplicate message id"),
    Tamper("duplicate_question_ids", _duplicate_question, r"duplicate qa id", qa_rebuilds=True),
    Tamper("no_sessions_at_all", _no_sessions, r"no sessions at all"),
    Tamper("no_questions", _no_questions, r"no questions", qa_rebuilds=True, stats_works=True),
    Tamper("persona_without_sessions", _persona_without_sessions, r"questions but no sessions"),
    Tamper("session_of_unknown_persona", _unknown_persona_session, r"unknown persona ghost-persona"),
    Tamper("timestamps_out_of_order", _out_of_order, r"not strictly after the previous message"),
    Tamper(
        "asked_at_before_persona_start",
        _asked_too_early,
        r"before its persona's trajectory starts",
        qa_rebuilds=True,
    ),
    Tamper("gold_answer_changed", _gold_changed, r"wrong_answer.*Atlantis", qa_rebuilds=True),
    Tamper("truncated_jsonl_line", _truncated, r"sessions\.jsonl:\d+: not valid JSON.*cut off"),
    *[
        Tamper(
            f"invalid_utf8_in_{name.split('.')[0]}",
            _invalid_utf8(name),
            rf"{re.escape(name)}:1: not valid UTF-8",
        )
        for name in ("personas.jsonl", "anchors.jsonl", "graphs.jsonl", "sessions.jsonl", "qa.jsonl")
    ],
    Tamper("empty_file", _empty_file, r"sessions\.jsonl.*(SHA-256 differs|no sessions)"),
    Tamper("json_value_of_wrong_type", _wrong_json_type, r"qa\.jsonl:3: expected a JSON object"),
    Tamper("field_of_wrong_type", _wrong_field_type, r"qa\.jsonl:1: invalid QAItem: evidence"),
    Tamper("unknown_field", _unknown_field, r"personas\.jsonl:1: invalid Persona: favourite_colour"),
    Tamper("null_where_text_belongs", _null_field, r"qa\.jsonl:1: invalid QAItem: question"),
    Tamper("lone_surrogate_escape", _lone_surrogate, r"sessions\.jsonl:1: not valid JSON"),
]
IDS = [t.name for t in TAMPERS]


def tampered(tmp_path: Path, tamper: Tamper) -> Path:
    root = tmp_path / "d"
    shutil.copytree(SAMPLE, root)
    tamper.apply(root)
    return root


# ---------------------------------------------------------------- the probes
@pytest.mark.parametrize("tamper", TAMPERS, ids=IDS)
def test_eval_refuses_a_tampered_dataset_naming_the_problem(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    refused(
        ["eval", "--data", str(root), "--systems", "bm25", "--out", str(tmp_path / "run")],
        match=tamper.match,
        code=2,
    )
    assert not (tmp_path / "run" / "summary.json").exists()


@pytest.mark.parametrize("tamper", TAMPERS, ids=IDS)
def test_validate_names_every_violation(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    refused(["validate", str(root)], match=tamper.match, code=1)


@pytest.mark.parametrize("tamper", TAMPERS, ids=IDS)
def test_stats_refuses_or_counts(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    if tamper.stats_works:
        worked(["stats", str(root), "--json"])
    else:
        refused(["stats", str(root)], match=tamper.match)


@pytest.mark.parametrize("tamper", TAMPERS, ids=IDS)
def test_export_refuses_a_tampered_dataset(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    refused(["export", "locomo", str(root), "--out", str(tmp_path / "locomo.json")], match=tamper.match)
    assert not (tmp_path / "locomo.json").exists()


@pytest.mark.parametrize("tamper", TAMPERS, ids=IDS)
def test_qa_rebuilds_damaged_questions_or_refuses_a_damaged_trajectory(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    if tamper.qa_rebuilds:
        worked(["qa", str(root)])
        worked(["validate", str(root)])
    else:
        refused(["qa", str(root)])


def test_the_untouched_copy_passes_every_command(tmp_path):
    pristine = tmp_path / "d"
    shutil.copytree(SAMPLE, pristine)
    worked(["validate", str(pristine)])
    worked(["stats", str(pristine)])
    worked(["export", "locomo", str(pristine), "--out", str(tmp_path / "locomo.json")])
    run = worked(
        ["eval", "--data", str(pristine), "--systems", "bm25", "--out", str(tmp_path / "run"), "--limit", "3"]
    )
    assert "NOT VERIFIED" not in run.output
    assert json.loads((tmp_path / "run/summary.json").read_text())["verified"] is True


def test_an_altered_anchor_fails_validate_and_eval_alike(tmp_path):
    """Eval runs validate's own check (keme.validate.verified_dataset): what one refuses, the other does."""
    root = tmp_path / "d"
    shutil.copytree(SAMPLE, root)
    edit(  # a record with a title (a bill has none): the forgery must still load
        root,
        "anchors.jsonl",
        lambda anchors: next(a for a in anchors if "title" in a["record"])["record"].update(title="Forged"),
    )
    reseal(root)
    refused(["validate", str(root)], match=r"\[anchor\] .*does not match its sealed hash", code=1)
    refused(
        ["eval", "--data", str(root), "--systems", "bm25", "--out", str(tmp_path / "run"), "--limit", "2"],
        match=r"\[anchor\] .*does not match its sealed hash",
    )


def test_validate_names_every_bad_line_of_every_file(tmp_path):
    root = tmp_path / "d"
    shutil.copytree(SAMPLE, root)
    _invalid_utf8("personas.jsonl")(root)
    _wrong_json_type(root)
    _truncated(root)
    result = refused(["validate", str(root)], code=1)
    for where in (
        r"personas\.jsonl:1: not valid UTF-8",
        r"qa\.jsonl:3: expected a JSON object",
        r"sessions\.jsonl:\d+: not valid JSON",
    ):
        assert re.search(where, result.output), where
    assert re.search(
        r"checks that need personas\.jsonl, qa\.jsonl, sessions\.jsonl were skipped", result.output
    )


def test_a_problem_in_every_layer_is_named_at_once(tmp_path):
    root = tmp_path / "d"
    shutil.copytree(SAMPLE, root)
    _duplicate_question(root)
    _unknown_persona_session(root)
    _sha(root)
    result = refused(["eval", "--data", str(root), "--systems", "bm25", "--out", str(tmp_path / "run")])
    for text in ("SHA-256 differs", "duplicate qa id", "unknown persona ghost-persona", "--no-verify"):
        assert text in result.output, text


# ---------------------------------------------------------------- --no-verify
@pytest.mark.parametrize(
    "tamper",
    [
        t
        for t in TAMPERS
        if t.name
        in (
            "manifest_hash_mismatch",
            "edited_evidence_message_resealed",
            "dangling_evidence_ids",
            "duplicate_question_ids",
        )
    ],
    ids=lambda t: t.name,
)
def test_no_verify_scores_it_and_every_report_says_so(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    out = tmp_path / "run"
    run = worked(["eval", "--data", str(root), "--systems", "bm25", "--out", str(out), "--no-verify"])
    assert "NOT VERIFIED" in run.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verified"] is False and summary["note"].startswith("NOT VERIFIED")
    assert (out / "leaderboard.md").read_text().startswith("**NOT VERIFIED")


@pytest.mark.parametrize(
    "tamper",
    [t for t in TAMPERS if t.name in ("truncated_jsonl_line", "invalid_utf8_in_qa", "manifest_not_json")],
    ids=lambda t: t.name,
)
def test_no_verify_still_refuses_what_cannot_be_read(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    refused(
        ["eval", "--data", str(root), "--systems", "bm25", "--out", str(tmp_path / "run"), "--no-verify"],
        match=tamper.match,
    )


# ---------------------------------------------------------------- imported datasets
@pytest.fixture
def locomo(tmp_path) -> Path:
    from eval.importers.locomo import import_locomo

    import_locomo(ROOT / "tests/fixtures/locomo_mini.json", tmp_path / "locomo")
    return tmp_path / "locomo"


def test_an_imported_dataset_is_checked_without_graphs_or_anchors(locomo, tmp_path):
    worked(["eval", "--data", str(locomo), "--systems", "bm25", "--out", str(tmp_path / "run")])


def test_a_tampered_imported_dataset_is_refused(locomo, tmp_path):
    _dangling_evidence(locomo)
    refused(
        ["eval", "--data", str(locomo), "--systems", "bm25", "--out", str(tmp_path / "run")],
        match="ghost-message",
    )


# ---------------------------------------------------------------- resuming
def test_a_dataset_edited_after_a_run_is_not_resumed_with_the_old_logs(tmp_path):
    root = tmp_path / "d"
    shutil.copytree(SAMPLE, root)
    args = ["eval", "--data", str(root), "--systems", "bm25", "--out", str(tmp_path / "run"), "--limit", "3"]
    worked(args)
    _edited_message_resealed(root)  # verification would catch it; with --no-verify the content hash must
    refused([*args, "--no-verify"], match=r"the dataset's content \(sha256\) was .*, now .*--force")
    worked([*args, "--no-verify", "--force"])


# ---------------------------------------------------------------- the real console boundary
@pytest.mark.parametrize(
    "tamper",
    [
        t
        for t in TAMPERS
        if t.name in ("manifest_hash_mismatch", "invalid_utf8_in_sessions", "dangling_evidence_ids")
    ],
    ids=lambda t: t.name,
)
def test_subprocess_eval_refuses(tmp_path, tamper):
    root = tampered(tmp_path, tamper)
    refuses(
        ["keme", "eval", "--data", str(root), "--systems", "bm25", "--out", str(tmp_path / "run")],
        match=tamper.match,
        env=WIDE,
    )


def test_subprocess_eval_with_no_verify_works(tmp_path):
    root = tampered(tmp_path, TAMPERS[0])
    run = works(
        [
            "keme",
            "eval",
            "--data",
            str(root),
            "--systems",
            "bm25",
            "--out",
            str(tmp_path / "run"),
            "--no-verify",
            "--limit",
            "2",
        ]
    )
    assert "NOT VERIFIED" in run.output

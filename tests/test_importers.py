"""LoCoMo and LongMemEval importers on small hand-written fixtures, and the LoCoMo exporter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from eval.importers.locomo import export_locomo, import_locomo, normalize_evidence, parse_when
from eval.importers.longmemeval import import_longmemeval
from keme.dataset.io import read_jsonl
from keme.errors import KemeError
from keme.models import QAItem, Session
from keme.validate import validate

FIXTURES = ROOT / "tests/fixtures"


def _qa(directory: Path) -> dict[str, QAItem]:
    return {q.id: q for q in read_jsonl(directory / "qa.jsonl", QAItem)}


@pytest.fixture
def locomo(tmp_path):
    stats = import_locomo(FIXTURES / "locomo_mini.json", tmp_path / "loc")
    return tmp_path / "loc", stats


def test_locomo_dates_parse():
    assert parse_when("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00"


@pytest.mark.parametrize("raw, ids", [
    (["D8:6; D9:17"], ["D8:6", "D9:17"]), (["D1:3 D1:5"], ["D1:3", "D1:5"]), (["D01:03"], ["D1:3"]),
    ("D2:1,D2:2", ["D2:1", "D2:2"]),
])
def test_locomo_evidence_is_normalised(raw, ids):
    assert normalize_evidence(raw)[0] == ids


def test_locomo_categories_map_to_types(locomo):
    qa = _qa(locomo[0])
    assert [qa[f"conv-1:q{i}"].type for i in range(1, 7)] == [
        "single_hop", "temporal_reasoning", "multi_hop", "single_hop", "open_domain", "adversarial"]


def test_locomo_adversarial_items_expect_abstention(locomo):
    item = _qa(locomo[0])["conv-1:q6"]
    assert item.spec.kind == "abstain" and item.proof.args["adversarial_answer"] == "Melanie's dog is named Max"


def test_locomo_malformed_evidence_is_resolved_or_counted_never_fatal(locomo):
    directory, stats = locomo
    qa = _qa(directory)
    assert qa["conv-1:q3"].evidence == ["conv-1:D1:4", "conv-1:D2:1"]
    assert qa["conv-1:q5"].evidence == ["conv-1:D1:1"]
    assert stats["import"]["evidence_unresolved"] == 1 and stats["import"]["evidence_pieces_not_ids"] == 1


def test_locomo_turns_keep_speakers_and_images_as_captions(locomo):
    sessions = read_jsonl(locomo[0] / "sessions.jsonl", Session)
    first = sessions[0].messages
    assert (first[0].role, first[0].speaker) == ("user", "Caroline")
    assert (first[1].role, first[1].speaker) == ("assistant", "Melanie")
    assert "a painting of a sunrise over a lake" in first[3].content
    assert all(a.timestamp < b.timestamp for a, b in zip(first, first[1:]))


def test_locomo_answers_get_rule_judgeable_specs(locomo):
    qa = _qa(locomo[0])
    assert qa["conv-1:q2"].spec.kind == "date" and qa["conv-1:q2"].spec.value == "2023-05-07"


def test_imported_locomo_validates(locomo):
    assert validate(locomo[0]) == []


def test_longmemeval_conventions(tmp_path):
    stats = import_longmemeval(FIXTURES / "longmemeval_mini.json", tmp_path / "lme")
    qa = _qa(tmp_path / "lme")
    assert qa["q1"].evidence == ["q1:answer_1_1"]
    assert qa["q1"].evidence_sessions == ["q1:answer_1"]  # answer_2 has no has_answer user turn: relabelled noans
    assert qa["q2_abs"].type == "abstention" and qa["q2_abs"].spec.kind == "abstain"
    assert qa["q3"].evidence_sessions == []  # evidence only in an assistant turn
    assert stats["import"]["noans_relabelled_sessions"] == 2
    assert stats["import"]["answer_session_ids_unresolved"] == 1
    assert stats["conventions"]["retrieval_roles"] == ["user"]
    assert validate(tmp_path / "lme") == []


def test_longmemeval_replays_user_turns_only(tmp_path):
    from eval.replay import load_replay

    import_longmemeval(FIXTURES / "longmemeval_mini.json", tmp_path / "lme")
    replay = load_replay(tmp_path / "lme")
    assert {m.role for p in replay.plans for s in p.sessions for m in s.messages} == {"user"}


def test_a_corrupt_json_line_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question_id": "a"}) + "\n{not json\n")
    with pytest.raises(KemeError, match=r"bad\.jsonl:2: not valid JSON"):
        import_longmemeval(bad, tmp_path / "out")


def test_a_corrupt_json_array_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[\n {"sample_id": "x",\n  "conversation": }\n]')
    with pytest.raises(KemeError, match=r"bad\.json:3:\d+: not valid JSON"):
        import_locomo(bad, tmp_path / "out")


def test_export_then_import_locomo_round_trips_the_sample(tmp_path):
    stats = export_locomo(ROOT / "data/sample", tmp_path / "sample.json")
    again = import_locomo(tmp_path / "sample.json", tmp_path / "back")
    original = read_jsonl(ROOT / "data/sample/qa.jsonl", QAItem)
    assert stats["qa"] == len(original) == again["qa"]
    assert again["import"].get("evidence_unresolved", 0) == 0
    back = {q.question: q for q in read_jsonl(tmp_path / "back/qa.jsonl", QAItem)}
    for item in original:
        assert len(back[item.question].evidence) == len(item.evidence)

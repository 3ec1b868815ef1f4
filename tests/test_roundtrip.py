"""Lossless where the format allows: a file in a benchmark's published shape goes through keme and comes
back equal on every field the format defines, and keme's own questions keep their types through it.

The fixtures (`tests/fixtures/*_published.json`) are written by hand after each release's data card and
real records, never by our exporter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import realshape
from conftest import ROOT

from eval.importers.locomo import export_locomo, import_locomo
from eval.importers.longmemeval import export_longmemeval, import_longmemeval, to_longmemeval
from eval.importers.mobilemem import export_mobilemem, import_mobilemem
from keme.dataset import Dataset

FIXTURES = ROOT / "tests/fixtures"


def _round_trip(importer, exporter, fixture: Path, tmp_path: Path) -> tuple[list, list]:
    importer(fixture, tmp_path / "keme")
    exporter(Dataset.load(tmp_path / "keme"), tmp_path / "back.json")
    return json.loads(fixture.read_text()), json.loads((tmp_path / "back.json").read_text())


def test_locomo_comes_back_field_for_field(tmp_path):
    source, back = _round_trip(import_locomo, export_locomo, FIXTURES / "locomo_published.json", tmp_path)
    assert back == source


def test_longmemeval_comes_back_field_for_field(tmp_path):
    source, back = _round_trip(
        import_longmemeval, export_longmemeval, FIXTURES / "longmemeval_published.json", tmp_path
    )
    assert back == source


def test_locomo_adversarial_questions_keep_their_category_and_bait(tmp_path):
    source, back = _round_trip(import_locomo, export_locomo, FIXTURES / "locomo_published.json", tmp_path)
    baited = [q for q in back[0]["qa"] if q["category"] == 5]
    assert [(q.get("answer"), q["adversarial_answer"]) for q in baited] == [
        (None, "a trophy"),
        ("No", "Yes"),
        (None, "self-care is important"),
    ]


def test_a_category_5_question_is_scored_as_locomo_scores_it_even_with_an_answer(tmp_path):
    """LoCoMo's evaluation.py scores every category-5 question by "not mentioned"; the two of locomo10.json
    that also carry an answer are a label conflict, flagged, and written back with both."""
    import_locomo(FIXTURES / "locomo_published.json", tmp_path / "keme")
    bowl = next(q for q in Dataset.load(tmp_path / "keme").qa if "bowl" in q.question)
    assert (bowl.spec.kind, bowl.type) == ("abstain", "adversarial")
    assert bowl.flags == ["label_conflict: category 5 (nothing to answer) with answer 'No' as well"]


def test_a_hard_set_goes_out_with_its_own_sessions_numbered_afresh(tmp_path):
    """A dataset whose sessions are no longer the source's (keme hardneg) must not take the source's
    session numbers, dates or annotations: evidence would point at other turns."""
    from typer.testing import CliRunner

    from keme.cli import app

    # the published shape at a real release's size: a tiny haystack leaves no room for a distractor
    import_locomo(realshape.locomo(tmp_path / "locomo.json"), tmp_path / "keme")
    assert (
        CliRunner()
        .invoke(app, ["hardneg", str(tmp_path / "keme"), "--out", str(tmp_path / "hard")])
        .exit_code
        == 0
    )
    hard = Dataset.load(tmp_path / "hard")
    export_locomo(hard, tmp_path / "hard.json")
    import_locomo(tmp_path / "hard.json", tmp_path / "back")
    back = Dataset.load(tmp_path / "back")
    text = {m.id: m.content for s in hard.sessions for m in s.messages}
    again = {m.id: m.content for s in back.sessions for m in s.messages}
    assert sorted(text.values()) == sorted(again.values())
    by_question = {q.question: q for q in back.qa}
    for item in hard.qa:
        assert [text[m] for m in item.evidence] == [again[m] for m in by_question[item.question].evidence]
    written = json.loads((tmp_path / "hard.json").read_text())
    assert all(s["observation"] == {} and s["session_summary"] == {} for s in written)


def test_what_keme_changed_goes_out_changed(tmp_path):
    """The export writes keme's values: what it keeps verbatim comes back only where it still holds."""
    import_locomo(FIXTURES / "locomo_published.json", tmp_path / "keme")
    data = Dataset.load(tmp_path / "keme")
    first = data.qa[0]
    data.qa = [first.model_copy(update={"answer": "8 May 2023", "evidence": []}), *data.qa[1:]]
    export_locomo(data, tmp_path / "back.json")
    record = json.loads((tmp_path / "back.json").read_text())[0]["qa"][0]
    assert (record["answer"], record["evidence"], record["category"]) == ("8 May 2023", [], 2)


@pytest.fixture(scope="module")
def sample_through_locomo(tmp_path_factory) -> tuple[Dataset, Dataset, list]:
    work = tmp_path_factory.mktemp("locomo")
    original = Dataset.load(ROOT / "data/sample")
    export_locomo(original, work / "sample.json")
    import_locomo(work / "sample.json", work / "back")
    return original, Dataset.load(work / "back"), json.loads((work / "sample.json").read_text())


def test_keme_question_types_come_back_through_locomo(sample_through_locomo):
    original, back, _ = sample_through_locomo
    assert [(q.type, q.subtype, q.answer, q.spec, q.asked_at, q.options) for q in back.qa] == [
        (q.type, q.subtype, q.answer, q.spec, q.asked_at, q.options) for q in original.qa
    ]


def test_keme_evidence_and_app_records_come_back_through_locomo(sample_through_locomo):
    original, back, _ = sample_through_locomo
    turn = {m.id: m for s in back.sessions for m in s.messages}
    for item, again in zip(original.qa, back.qa):
        assert [turn[m].content for m in again.evidence] == [
            next(m.content for s in original.sessions for m in s.messages if m.id == e) for e in item.evidence
        ]
    roles = sorted((m.role, m.app or "") for s in back.sessions for m in s.messages)
    assert roles == sorted((m.role, m.app or "") for s in original.sessions for m in s.messages)


def test_keme_types_go_out_as_the_nearest_locomo_category(sample_through_locomo):
    original, _, written = sample_through_locomo
    category = {q["keme"]["subtype"]: q["category"] for s in written for q in s["qa"]}
    kinds = {q.subtype: q for q in original.qa}
    for subtype, number in category.items():
        item = kinds[subtype]
        if item.spec.kind == "abstain":
            assert number == 5
        elif item.type == "adversarial":
            assert number == 4  # LoCoMo's 5 is unanswerable; keme's adversarial questions have an answer


def test_an_abstention_goes_out_as_category_5_without_an_answer(sample_through_locomo):
    original, _, written = sample_through_locomo
    abstentions = [q for s in written for q in s["qa"] if q["keme"]["type"] == "abstention"]
    assert abstentions and all(q["category"] == 5 and "answer" not in q for q in abstentions)


def test_longmemeval_turns_carry_screenshot_captions():
    data = Dataset.load(ROOT / "data/sample")
    message = data.sessions[0].messages[0]
    shown = message.model_copy(update={"captions": ["a train ticket, Shanghai to Hangzhou"]})
    data.sessions = [
        data.sessions[0].model_copy(update={"messages": [shown, *data.sessions[0].messages[1:]]}),
        *data.sessions[1:],
    ]
    instances, stats = to_longmemeval(data)
    turns = [t["content"] for i in instances for s in i["haystack_sessions"] for t in s]
    assert any(t.endswith("[image: a train ticket, Shanghai to Hangzhou]") for t in turns)
    assert stats["captions_in_turn_text"] > 0


def test_an_abstention_id_is_not_suffixed_twice(tmp_path):
    source, back = _round_trip(
        import_longmemeval, export_longmemeval, FIXTURES / "longmemeval_published.json", tmp_path
    )
    assert [i["question_id"] for i in back] == [i["question_id"] for i in source]
    assert sum(i["question_id"].endswith("_abs_abs") for i in back) == 0


def test_mobilemem_text_comes_back_field_for_field(tmp_path):
    source, back = _round_trip(
        import_mobilemem, export_mobilemem, FIXTURES / "mobilemem_published.json", tmp_path
    )
    assert back == source


def test_an_edited_mobilemem_gold_goes_out_edited_and_the_rest_as_written(tmp_path):
    import_mobilemem(FIXTURES / "mobilemem_published.json", tmp_path / "keme")
    data = Dataset.load(tmp_path / "keme")
    data.qa = [data.qa[0].model_copy(update={"answer": "400 CNY"}), *data.qa[1:]]
    export_mobilemem(data, tmp_path / "back.json")
    pair = json.loads((tmp_path / "back.json").read_text())[0]["question_type_toolbook"]["question_types"][0][
        "qa_pairs"
    ][0]
    assert pair["golden_answers"] == ["400 CNY"] and pair["topic"] == ["shopping"]

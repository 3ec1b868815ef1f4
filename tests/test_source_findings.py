"""A benchmark's own label defects are source findings: reported, flagged, left out of the scores by default,
never a refusal. Built on `tests/fixtures/locomo_published.json`, a small file in LoCoMo's published shape
that carries the defects the real `locomo10.json` has (one question asked twice with another gold, a word
for word duplicate, evidence strings that are no turn ids)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import realshape
from conftest import ROOT
from typer.testing import CliRunner

from eval.importers.locomo import import_locomo
from eval.importers.longmemeval import import_longmemeval
from eval.replay import replay_of
from eval.run import Settings, run
from keme.cli import app
from keme.dataset import Dataset
from keme.dataset.findings import empty_gold, source_findings
from keme.validate import check_scoring, validate, verified_dataset

FIXTURES = ROOT / "tests/fixtures"


@pytest.fixture
def locomo(tmp_path) -> Path:
    import_locomo(FIXTURES / "locomo_published.json", tmp_path / "locomo")
    return tmp_path / "locomo"


def _flags(root: Path) -> dict[str, list[str]]:
    return {q.id: q.flags for q in Dataset.load(root).qa if q.flags}


def test_locomo_as_published_validates(locomo):
    assert validate(locomo) == []


def test_a_question_asked_twice_with_two_golds_flags_both(locomo):
    flags = _flags(locomo)
    assert flags["conv-26:q7"] == ["same_text_other_gold: also asked as conv-26:q8 (abstain)"]
    assert flags["conv-26:q8"] == ["same_text_other_gold: also asked as conv-26:q7 ('a trophy')"]


def test_a_word_for_word_duplicate_flags_the_later_copy_only(locomo):
    flags = _flags(locomo)
    assert flags["conv-26:q12"] == ["duplicate_question: repeats conv-26:q5 word for word"]
    assert "conv-26:q5" not in flags


def test_evidence_that_is_no_turn_id_is_flagged_with_what_the_source_wrote(locomo):
    assert _flags(locomo)["conv-26:q11"] == ["evidence_unresolved: 'D': no turn or session has that id"]


def test_a_turn_id_written_with_a_stray_colon_resolves(locomo):
    item = next(q for q in Dataset.load(locomo).qa if q.id == "conv-26:q5")
    assert item.evidence == ["conv-26:D2:2"] and not item.flags


def test_a_category_5_question_that_also_has_an_answer_is_a_label_conflict(locomo):
    assert _flags(locomo)["conv-26:q9"] == [
        "label_conflict: category 5 (nothing to answer) with answer 'No' as well"
    ]


def test_only_the_defective_questions_are_flagged(locomo):
    assert sorted(_flags(locomo)) == ["conv-26:q11", "conv-26:q12", "conv-26:q7", "conv-26:q8", "conv-26:q9"]


def test_the_manifest_counts_the_findings_by_kind(locomo):
    stats = json.loads((locomo / "manifest.json").read_text())["stats"]
    assert stats["source_findings"] == {
        "same_text_other_gold": 2,
        "duplicate_question": 1,
        "evidence_unresolved": 1,
        "label_conflict": 1,
        "flagged_items": 5,
    }


def test_eval_leaves_flagged_questions_out_and_names_them(locomo, tmp_path):
    data = verified_dataset(locomo)
    summary = run(Settings(data=data, out=tmp_path / "run", systems=["bm25"], bootstrap=10))
    findings = summary["source_findings"]
    assert (findings["flagged"], findings["left_out"]) == (5, 5)
    assert sorted(findings["items"]) == [
        "conv-26:q11",
        "conv-26:q12",
        "conv-26:q7",
        "conv-26:q8",
        "conv-26:q9",
    ]
    asked = {json.loads(line)["question_id"] for line in (tmp_path / "run/results.jsonl").open()}
    assert asked.isdisjoint(findings["items"]) and len(asked) == len(data.qa) - 5
    assert "left out of the scores (--include-flagged keeps them)" in summary["note"]


def test_include_flagged_scores_them_and_says_so(locomo, tmp_path):
    data = verified_dataset(locomo)
    summary = run(
        Settings(data=data, out=tmp_path / "run", systems=["bm25"], bootstrap=10, include_flagged=True)
    )
    assert summary["source_findings"]["left_out"] == 0
    assert len(replay_of(data, include_flagged=True).questions) == len(data.qa)
    assert "are scored (--include-flagged)" in summary["note"]


def test_a_flag_removed_by_hand_is_an_integrity_violation(locomo):
    lines = (locomo / "qa.jsonl").read_text().splitlines()
    edited = [json.loads(line) for line in lines]
    for item in edited:
        item.pop("flags", None)
    data = Dataset.load(locomo)
    data.qa = [type(data.qa[0]).model_validate(item) for item in edited]
    problems = check_scoring(data)
    assert {v.where for v in problems} == {
        "conv-26:q11",
        "conv-26:q12",
        "conv-26:q7",
        "conv-26:q8",
        "conv-26:q9",
    }
    assert all("differ from its source findings" in v.message for v in problems)


def test_a_synthesized_question_is_never_flagged():
    data = Dataset.load(ROOT / "data/sample")
    data.qa = [data.qa[0].model_copy(update={"flags": ["duplicate_question: planted"]}), *data.qa[1:]]
    (problem,) = check_scoring(data)
    assert problem.where == data.qa[0].id and "differ from its source findings []" in problem.message


def test_a_synthesized_question_asked_twice_with_two_golds_is_still_a_violation():
    data = Dataset.load(ROOT / "data/sample")
    first = data.qa[0]
    twin = first.model_copy(update={"id": "twin", "answer": "something else"})
    data.qa = [*data.qa, twin]
    assert any("same_text_other_gold" in v.message for v in check_scoring(data))


@pytest.mark.parametrize("answer", ["", "  ", "NaN", "nan", "None"])
def test_an_empty_or_nan_gold_says_nothing(answer):
    assert empty_gold(answer)


@pytest.mark.parametrize("answer", ["0", "No", "none of them", "Nancy"])
def test_a_short_gold_is_not_empty(answer):
    assert not empty_gold(answer)


def _one_sample(tmp_path: Path, qa: list[dict], turns: list[str]) -> Path:
    conversation = {
        "speaker_a": "Nate",
        "speaker_b": "Joanna",
        "session_1_date_time": "7:31 pm on 21 January, 2022",
        "session_1": [
            {"speaker": "Nate" if i % 2 == 0 else "Joanna", "dia_id": f"D1:{i + 1}", "text": text}
            for i, text in enumerate(turns)
        ],
    }
    path = tmp_path / "one.json"
    path.write_text(json.dumps([{"sample_id": "conv-42", "conversation": conversation, "qa": qa}]))
    import_locomo(path, tmp_path / "d")
    return tmp_path / "d"


def test_an_empty_or_nan_gold_imports_flagged_rather_than_skipped(tmp_path):
    qa = [
        {"question": "Where did Nate go?", "answer": "", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Nate win?", "answer": math.nan, "evidence": ["D1:1"], "category": 4},
    ]
    root = _one_sample(tmp_path, qa, ["I won my fourth tournament!", "Wow, congrats!"])
    flags = _flags(root)
    assert flags == {
        "conv-42:q1": ["empty_gold: the gold answer is ''"],
        "conv-42:q2": ["empty_gold: the gold answer is 'nan'"],
    }


def test_a_one_word_gold_the_conversation_never_says_is_flagged(tmp_path):
    qa = [
        {
            "question": "What is Nate's book series about?",
            "answer": "dragons",
            "evidence": ["D1:1"],
            "category": 4,
        }
    ]
    root = _one_sample(tmp_path, qa, ["I love this series, it has magic!", "Sounds fun."])
    assert _flags(root) == {
        "conv-42:q1": ["gold_not_stated: no word of 'dragons' occurs in the conversation"]
    }


@pytest.mark.parametrize(
    "answer,said",
    [
        ("Four", "I won my fourth video game tournament on Friday!"),  # an ordinal says the number
        ("at an early age", "My dad took me to my first car show when I was 10."),  # a paraphrase
        ("trophies", "I got a trophy from the contest."),
        ("cats", "Caroline adopted a cat."),  # a plural gold meets its singular
    ],
)
def test_a_gold_the_conversation_says_in_other_words_is_not_flagged(tmp_path, answer, said):
    qa = [{"question": "What about Nate?", "answer": answer, "evidence": ["D1:1"], "category": 4}]
    assert _flags(_one_sample(tmp_path, qa, [said, "Nice."])) == {}


def test_computed_golds_are_not_held_to_the_text(tmp_path):
    qa = [
        {
            "question": "When did Nate win?",
            "answer": "Friday before 21 January 2022",
            "evidence": ["D1:1"],
            "category": 2,
        }
    ]
    assert _flags(_one_sample(tmp_path, qa, ["I won yesterday!", "Congrats!"])) == {}


def test_an_answer_session_id_missing_from_the_haystack_is_flagged(tmp_path):
    import_longmemeval(FIXTURES / "longmemeval_mini.json", tmp_path / "lme")
    assert _flags(tmp_path / "lme") == {
        "q1": ["evidence_unresolved: 'answer_session_ids: answer_missing': no turn or session has that id"]
    }


def test_findings_are_the_same_computed_again():
    from keme.dataset.findings import flag_items

    data = Dataset.load(ROOT / "data/sample")
    assert source_findings(data.qa, data.sessions) == []
    assert flag_items(data.qa, data.sessions) == data.qa


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{d}"],
        ["stats", "{d}"],
        ["eval", "--data", "{d}", "--systems", "bm25", "--out", "{t}/run", "--bootstrap", "10"],
        ["export", "locomo", "{d}", "--out", "{t}/out.json"],
        ["export", "longmemeval", "{d}", "--out", "{t}/lme.json"],
        ["hardneg", "{d}", "--out", "{t}/hard"],
    ],
)
def test_every_command_takes_locomo_as_published_without_an_override(locomo, tmp_path, command):
    if (
        command[0] == "hardneg"
    ):  # a hard trajectory needs haystacks of a real release's size beside its evidence
        import_locomo(realshape.locomo(tmp_path / "locomo.json"), tmp_path / "sized")
        locomo = tmp_path / "sized"
    args = [a.format(d=locomo, t=tmp_path) for a in command]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_a_visual_gold_is_not_held_to_the_text(tmp_path):
    """A visual question's gold is read off the image, which the text need not describe."""
    from keme.dataset.findings import source_findings

    import_locomo(FIXTURES / "locomo_published.json", tmp_path / "locomo")
    data = Dataset.load(tmp_path / "locomo")
    item = next(q for q in data.qa if q.id == "conv-26:q3").model_copy(update={"answer": "War"})
    visual = item.model_copy(update={"type": "visual_reasoning", "id": "visual", "question": "Which album?"})
    kinds = {f.item_id: f.kind for f in source_findings([item, visual], data.sessions)}
    assert kinds == {item.id: "gold_not_stated"}


def test_an_empty_question_text_is_flagged(tmp_path):
    qa = [{"question": " ", "answer": "fourth", "evidence": ["D1:1"], "category": 4}]
    root = _one_sample(tmp_path, qa, ["I won my fourth tournament!", "Wow."])
    assert _flags(root) == {"conv-42:q1": ["empty_question: the question text is empty"]}

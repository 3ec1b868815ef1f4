"""LoCoMo and LongMemEval importers on small hand-written fixtures, and the LoCoMo exporter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from eval.importers.locomo import export_locomo, import_locomo, normalize_evidence, parse_when
from eval.importers.longmemeval import import_longmemeval
from eval.replay import replay_of
from keme.dataset import Dataset
from keme.dataset.io import read_jsonl
from keme.errors import KemeError
from keme.models import Persona, QAItem, Session, safe_id
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


@pytest.mark.parametrize(
    "raw, ids",
    [
        (["D8:6; D9:17"], ["D8:6", "D9:17"]),
        (["D1:3 D1:5"], ["D1:3", "D1:5"]),
        (["D01:03"], ["D1:3"]),
        ("D2:1,D2:2", ["D2:1", "D2:2"]),
    ],
)
def test_locomo_evidence_is_normalised(raw, ids):
    assert normalize_evidence(raw)[0] == ids


def test_locomo_categories_map_to_types(locomo):
    qa = _qa(locomo[0])
    assert [qa[f"conv-1:q{i}"].type for i in range(1, 7)] == [
        "single_hop",
        "temporal_reasoning",
        "multi_hop",
        "single_hop",
        "open_domain",
        "adversarial",
    ]


def test_locomo_adversarial_items_expect_abstention(locomo):
    item = _qa(locomo[0])["conv-1:q6"]
    assert item.spec.kind == "abstain" and item.proof.args.adversarial_answer == "Melanie's dog is named Max"


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
    assert first[3].captions == ["a painting of a sunrise over a lake"]
    assert first[3].content == "I painted a sunrise over the lake last week."
    assert all(a.timestamp < b.timestamp for a, b in zip(first, first[1:]))


def test_systems_see_a_locomo_turn_as_name_then_text(locomo):
    replay = replay_of(Dataset.load(locomo[0]))
    first = replay.plans[0].sessions[0].messages
    assert first[0].content.startswith("Caroline: ")
    assert first[1].content.startswith("Melanie: ")
    assert first[3].content.endswith("[image: a painting of a sunrise over a lake]")


def test_a_locomo_photo_caption_survives_export(locomo, tmp_path):
    out = tmp_path / "locomo.json"
    export_locomo(Dataset.load(locomo[0]), out)
    turns = json.loads(out.read_text())[0]["conversation"]["session_1"]
    assert turns[3]["blip_caption"] == "a painting of a sunrise over a lake"


def test_locomo_answers_get_rule_judgeable_specs(locomo):
    qa = _qa(locomo[0])
    assert qa["conv-1:q2"].spec.kind == "date" and qa["conv-1:q2"].spec.value == "2023-05-07"


def test_imported_locomo_validates(locomo):
    assert validate(locomo[0]) == []


def test_longmemeval_conventions(tmp_path):
    stats = import_longmemeval(FIXTURES / "longmemeval_mini.json", tmp_path / "lme")
    qa = _qa(tmp_path / "lme")
    assert qa["q1"].evidence == ["q1:answer_1_1"]
    # answer_2 has no has_answer user turn: relabelled noans
    assert qa["q1"].evidence_sessions == ["q1:answer_1"]
    assert qa["q2_abs"].type == "abstention" and qa["q2_abs"].spec.kind == "abstain"
    assert qa["q3"].evidence_sessions == []  # evidence only in an assistant turn
    assert stats["import"]["noans_relabelled_sessions"] == 2
    assert stats["import"]["answer_session_ids_unresolved"] == 1
    assert stats["conventions"]["retrieval_roles"] == ["user"]
    assert validate(tmp_path / "lme") == []


def test_longmemeval_replays_user_turns_only(tmp_path):
    from eval.replay import replay_of

    import_longmemeval(FIXTURES / "longmemeval_mini.json", tmp_path / "lme")
    replay = replay_of(Dataset.load(tmp_path / "lme"))
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
    stats = export_locomo(Dataset.load(ROOT / "data/sample"), tmp_path / "sample.json")
    again = import_locomo(tmp_path / "sample.json", tmp_path / "back")
    original = read_jsonl(ROOT / "data/sample/qa.jsonl", QAItem)
    assert stats["qa"] == len(original) == again["qa"]
    assert again["import"].get("evidence_unresolved", 0) == 0
    # a question text can be asked twice (two trips with the same friend): match the k-th of each in order
    back: dict[str, list[QAItem]] = {}
    for q in read_jsonl(tmp_path / "back/qa.jsonl", QAItem):
        back.setdefault(q.question, []).append(q)
    for item in original:
        assert len(back[item.question].pop(0).evidence) == len(item.evidence)


# -- ids that are not file names, bad records, and where the dataset goes


def _locomo_sample(
    sample_id, *, dates=("1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023"), turns=None, qa=None
):
    conversation = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for number, when in enumerate(dates, start=1):
        conversation[f"session_{number}_date_time"] = when
        conversation[f"session_{number}"] = (
            turns[number - 1]
            if turns
            else [
                {
                    "speaker": "Ann",
                    "dia_id": f"D{number}:1",
                    "text": f"{sample_id} says hello in session {number}",
                },
                {
                    "speaker": "Bob",
                    "dia_id": f"D{number}:2",
                    "text": f"Bob answers {sample_id} in session {number}",
                },
            ]
        )
    return {
        "sample_id": sample_id,
        "conversation": conversation,
        "qa": qa
        if qa is not None
        else [{"question": "Who says hello?", "answer": "Ann", "evidence": ["D1:1"], "category": 4}],
    }


def _write(tmp_path, name, records):
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


def test_locomo_sample_ids_that_are_not_file_names_are_renamed_and_the_original_kept(tmp_path):
    stats = import_locomo(
        _write(tmp_path, "l.json", [_locomo_sample("../x"), _locomo_sample("a/b")]), tmp_path / "d"
    )
    qa = read_jsonl(tmp_path / "d/qa.jsonl", QAItem)
    assert [q.persona_id for q in qa] == [safe_id("../x"), safe_id("a/b")]
    assert [q.proof.args.source_sample_id for q in qa] == ["../x", "a/b"]
    assert stats["renamed_ids"] == {safe_id("../x"): "../x", safe_id("a/b"): "a/b"}
    assert stats["import"]["ids_renamed"] == 2
    assert validate(tmp_path / "d") == []


def test_a_conversation_written_in_chinese_imports_as_chinese(tmp_path):
    turns = [
        [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "我下周要去厦门出差，帮我记一下。"},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "好的，厦门出差已经记下了。"},
        ],
        [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "Booked it."},
            {"speaker": "Bob", "dia_id": "D2:2", "text": "Noted."},
        ],
    ]
    qa = [{"question": "我下周去哪里出差？", "answer": "厦门", "evidence": ["D1:1"], "category": 4}]
    import_locomo(_write(tmp_path, "l.json", [_locomo_sample("c1", turns=turns, qa=qa)]), tmp_path / "d")
    data = Dataset.load(tmp_path / "d")
    assert [s.language for s in data.sessions] == ["zh", "en"]
    assert data.personas[0].language == "zh"
    assert data.qa[0].language == "zh"


def test_a_repeated_sample_id_keeps_both_samples_under_distinct_ids(tmp_path):
    stats = import_locomo(
        _write(tmp_path, "l.json", [_locomo_sample("c1"), _locomo_sample("c1")]), tmp_path / "d"
    )
    personas = [p.id for p in read_jsonl(tmp_path / "d/personas.jsonl", Persona)]
    assert personas[0] == "c1" and len(set(personas)) == 2
    assert stats["import"]["duplicate_sample_ids"] == 1


def test_a_repeated_dia_id_is_counted_and_evidence_keeps_the_first_turn(tmp_path):
    turns = [
        [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "first"},
            {"speaker": "Bob", "dia_id": "D1:1", "text": "again"},
        ],
        [{"speaker": "Ann", "dia_id": "D2:1", "text": "later"}],
    ]
    stats = import_locomo(_write(tmp_path, "l.json", [_locomo_sample("c1", turns=turns)]), tmp_path / "d")
    assert stats["import"]["duplicate_turn_ids"] == 1
    assert stats["import_problems"] == [
        "sample 1 (c1), session_1, turn 2: dia_id D1:1 already used; kept for evidence is the first"
    ]
    assert _qa(tmp_path / "d")["c1:q1"].evidence == ["c1:D1:1"]
    assert validate(tmp_path / "d") == []


def test_sessions_dated_out_of_order_are_put_in_time_order(tmp_path):
    sample = _locomo_sample("c1", dates=("10:37 am on 27 June, 2023", "1:56 pm on 8 May, 2023"))
    stats = import_locomo(_write(tmp_path, "l.json", [sample]), tmp_path / "d")
    persona = read_jsonl(tmp_path / "d/personas.jsonl", Persona)[0]
    assert (
        persona.start.isoformat() == "2023-05-08T13:56:00" and persona.end.date().isoformat() == "2023-06-27"
    )
    assert [s.id for s in read_jsonl(tmp_path / "d/sessions.jsonl", Session)] == ["c1:S2", "c1:S1"]
    assert stats["import"]["sessions_out_of_order"] == 1
    assert validate(tmp_path / "d") == []


def test_sessions_with_the_same_date_are_moved_apart(tmp_path):
    sample = _locomo_sample("c1", dates=("1:56 pm on 8 May, 2023", "1:56 pm on 8 May, 2023"))
    stats = import_locomo(_write(tmp_path, "l.json", [sample]), tmp_path / "d")
    second = read_jsonl(tmp_path / "d/sessions.jsonl", Session)[1]
    assert second.start.isoformat() == "2023-05-08T13:57:30"  # one minute after the first session's last turn
    assert stats["import"]["sessions_moved"] == 1
    assert validate(tmp_path / "d") == []


def test_a_bad_turn_is_skipped_and_named_by_position(tmp_path):
    turns = [
        [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "hi"},
            {"speaker": None, "dia_id": "D1:2", "text": "x"},
            {"speaker": "Bob", "dia_id": 3, "text": "y"},
            "not a turn",
        ],
        [{"speaker": "Ann", "dia_id": "D2:1", "text": "later"}],
    ]
    stats = import_locomo(_write(tmp_path, "l.json", [_locomo_sample("c1", turns=turns)]), tmp_path / "d")
    assert stats["import"]["turns_skipped"] == 3
    assert stats["import_problems"] == [
        "sample 1 (c1), session_1, turn 2: speaker: Input should be a valid string (got null)",
        "sample 1 (c1), session_1, turn 3: dia_id: Input should be a valid string (got a number)",
        "sample 1 (c1), session_1, turn 4: expected a JSON object, found a string",
    ]
    assert stats["messages"] == 2


def test_a_lone_surrogate_is_replaced_and_counted(tmp_path):
    path = tmp_path / "l.json"
    path.write_text(json.dumps([_locomo_sample("c1")]).replace("says hello", "says \\ud800 hello"))
    stats = import_locomo(path, tmp_path / "d")
    assert stats["import"]["lone_surrogates_replaced"] == 3  # two turns and the question
    assert "\ufffd" in (tmp_path / "d/sessions.jsonl").read_text(encoding="utf-8")


def test_a_lone_surrogate_in_a_value_kept_as_published_is_replaced_and_counted(tmp_path):
    """Ids, unresolved evidence and unknown fields go into the dataset verbatim (for a lossless export),
    past the text fields' cleaning; a lone surrogate there must still be written, not crash the import."""
    instance = {
        "question_id": "q\udc00",
        "question_type": "single-session-user",
        "question": "Where do I work?",
        "answer": "Acme",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["s\udc00"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21"],
        "haystack_sessions": [[{"role": "user", "content": "I work at Acme", "has_answer": True}]],
        "answer_session_ids": ["gone\udc00"],
        "annotator": "a\udc00",
    }
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([instance]))  # \\udc00 escapes, as a JSON file may hold
    stats = import_longmemeval(path, tmp_path / "d")
    assert stats["import"]["lone_surrogates_replaced"] >= 3
    assert validate(tmp_path / "d") == []
    persona = Dataset.load(tmp_path / "d").personas[0]
    assert persona.source["instance"]["annotator"] == "a\ufffd"


def test_a_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "l.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([_locomo_sample("c1")]).encode())
    assert import_locomo(path, tmp_path / "d")["personas"] == 1


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "l.json"
    path.write_bytes(b'[\n{"sample_id": "c\xff1"}\n]')
    with pytest.raises(KemeError, match=r"l\.json:2: not valid UTF-8"):
        import_locomo(path, tmp_path / "d")


def test_nothing_usable_is_an_error_naming_the_first_problems(tmp_path):
    with pytest.raises(KemeError, match=r"nothing usable in 2 record\(s\): sample 1: expected a JSON object"):
        import_locomo(_write(tmp_path, "l.json", [1, {"sample_id": "c2"}]), tmp_path / "d")


def test_an_existing_dataset_is_replaced_only_with_force(tmp_path):
    source = _write(tmp_path, "l.json", [_locomo_sample("c1")])
    import_locomo(source, tmp_path / "d")
    with pytest.raises(KemeError, match="already holds a keme dataset; pass --force"):
        import_locomo(source, tmp_path / "d")
    assert (
        import_locomo(_write(tmp_path, "m.json", [_locomo_sample("c2")]), tmp_path / "d", force=True)[
            "personas"
        ]
        == 1
    )
    assert [p.id for p in read_jsonl(tmp_path / "d/personas.jsonl", Persona)] == ["c2"]


def test_force_replaces_the_files_the_old_dataset_owned_and_nothing_else(tmp_path):
    shutil.copytree(ROOT / "data/sample", tmp_path / "d")
    (tmp_path / "d/notes.txt").write_text("mine")
    import_locomo(_write(tmp_path, "l.json", [_locomo_sample("c1")]), tmp_path / "d", force=True)
    assert not (tmp_path / "d/anchors.jsonl").exists() and not (tmp_path / "d/graphs.jsonl").exists()
    assert (tmp_path / "d/notes.txt").read_text() == "mine"
    assert validate(tmp_path / "d") == []


def test_a_directory_that_is_not_a_dataset_is_never_written_into(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d/holiday.jpg").write_bytes(b"jpg")
    with pytest.raises(KemeError, match="not empty and holds no keme dataset"):
        import_locomo(_write(tmp_path, "l.json", [_locomo_sample("c1")]), tmp_path / "d", force=True)
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["holiday.jpg"]


def _lme_instance(qid, session_ids=("s1", "s2"), dates=("2023/05/20 (Sat) 02:21", "2023/05/25 (Thu) 10:02")):
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where do I work?",
        "answer": "Acme",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": list(session_ids),
        "haystack_dates": list(dates),
        "haystack_sessions": [
            [
                {"role": "user", "content": f"{qid} {s}: I work at Acme", "has_answer": True},
                {"role": "assistant", "content": f"noted {s}"},
            ]
            for s in session_ids
        ],
        "answer_session_ids": [session_ids[0]],
    }


def test_longmemeval_ids_that_are_not_file_names_are_renamed_and_the_original_kept(tmp_path):
    stats = import_longmemeval(
        _write(tmp_path, "m.json", [_lme_instance("../q", session_ids=("/s", "s/.."))]), tmp_path / "d"
    )
    qid = safe_id("../q")
    item = _qa(tmp_path / "d")[qid]
    assert item.proof.args.source_question_id == "../q"
    # answer_session_ids still match the source ids
    assert item.evidence_sessions == [f"{qid}:{safe_id('/s')}"]
    assert stats["renamed_ids"] == {
        qid: "../q",
        f"{qid}:{safe_id('/s')}": "/s",
        f"{qid}:{safe_id('s/..')}": "s/..",
    }
    assert validate(tmp_path / "d") == []


def test_longmemeval_repeated_ids_are_renamed_and_counted(tmp_path):
    stats = import_longmemeval(
        _write(tmp_path, "m.json", [_lme_instance("q1", session_ids=("s1", "s1")), _lme_instance("q1")]),
        tmp_path / "d",
    )
    assert stats["import"]["duplicate_question_ids"] == 1 and stats["import"]["duplicate_session_ids"] == 1
    assert len({q.id for q in read_jsonl(tmp_path / "d/qa.jsonl", QAItem)}) == 2


def test_longmemeval_bad_records_are_skipped_and_counted(tmp_path):
    bad_turn = _lme_instance("q2")
    bad_turn["haystack_sessions"][1][1] = {"role": "assistant", "content": 7}
    bad_date = _lme_instance("q3", dates=(20230520, "2023/05/25 (Thu) 10:02"))
    stats = import_longmemeval(
        _write(tmp_path, "m.json", [{"question_id": "q1"}, bad_turn, bad_date]), tmp_path / "d"
    )
    assert stats["personas"] == 2
    assert stats["import"]["instances_skipped"] == 1 and stats["import"]["turns_skipped"] == 1
    assert stats["import"]["unparsed_dates"] == 1
    assert stats["import_problems"][0].startswith("instance 1: question: Field required")
    assert validate(tmp_path / "d") == []


def test_export_refuses_a_dataset_whose_evidence_does_not_resolve(tmp_path):
    shutil.copytree(ROOT / "data/sample", tmp_path / "d")
    path = tmp_path / "d/qa.jsonl"
    path.write_text(path.read_text().replace('"evidence":["', '"evidence":["p01-s9999-m01","', 1))
    with pytest.raises(KemeError, match=r"cannot export: question \S+: evidence \['p01-s9999-m01'\]"):
        export_locomo(Dataset.load(tmp_path / "d"), tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_export_refuses_a_directory_as_its_output(tmp_path):
    with pytest.raises(KemeError, match="is a directory"):
        export_locomo(Dataset.load(ROOT / "data/sample"), tmp_path)

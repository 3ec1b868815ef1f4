"""The field's formats: MobileMem text both ways, LongMemEval out (and back in); MobileMem-Omni in is
tests/test_import_omni.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import sample_dataset
from typer.testing import CliRunner

from eval.importers.longmemeval import DATE_FORMAT, export_longmemeval, import_longmemeval
from eval.importers.mobilemem import export_mobilemem, import_mobilemem, question_type
from keme.cli import app
from keme.dataset import Dataset
from keme.validate import validate


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mm") / "mobilemem_data.json"
    export_mobilemem(sample_dataset(), out)
    return out


# ------------------------------------------------------------------------------ MobileMem text: export
def test_the_export_has_every_field_membases_loader_reads(exported):
    samples = json.loads(exported.read_text())
    assert len(samples) == len(sample_dataset().personas)
    for sample in samples:
        assert {"person", "sessions", "graphs", "question_type_toolbook"} <= set(sample)
        assert "id" in sample["person"]
        for session in sample["sessions"]:
            assert {"id", "event_id", "messages", "side_note", "created_at"} <= set(session)
            times = [datetime.fromisoformat(m["timestamp"]) for m in session["messages"]]
            assert times and times == sorted(times)  # MemBase refuses a session out of time order
            for message in session["messages"]:
                assert {"id", "name", "role", "content", "side_note", "created_at", "metadata"} <= set(
                    message
                )
                assert message["role"] in ("user", "assistant", "system")
        for qtype in sample["question_type_toolbook"]["question_types"]:
            for pair in qtype["qa_pairs"]:
                keys = {"id", "question", "question_type", "question_form", "golden_answers", "difficulty"}
                keys |= {"topic", "num_hops", "num_sub_questions", "effective_timestamp", "source_evidences"}
                assert keys | {"is_consumed", "side_note", "created_at"} <= set(pair)
                assert pair["golden_answers"] and pair["question_form"] in (
                    "open_ended",
                    "single_choice",
                    "multiple_choice",
                )
                assert all("id" in e for e in pair["source_evidences"])


def test_an_app_record_goes_out_as_a_system_message_named_by_its_app(exported):
    messages = [m for s in json.loads(exported.read_text())[0]["sessions"] for m in s["messages"]]
    record = next(m for m in messages if m["role"] == "system")
    assert record["name"] == record["metadata"]["app"] and record["name"] != "system"


def test_a_choice_question_shows_its_options_in_the_question_text(exported):
    pairs = [
        p
        for s in json.loads(exported.read_text())
        for t in s["question_type_toolbook"]["question_types"]
        for p in t["qa_pairs"]
    ]
    choice = next(p for p in pairs if p["question_form"] == "single_choice")
    assert "\nA. " in choice["question"] and "\nB. " in choice["question"]


def test_the_event_graph_goes_out_as_one_graph_per_parent_event(exported):
    graphs = json.loads(exported.read_text())[0]["graphs"]
    roots = [g for g in graphs if g["parent_id"] is None]
    assert len(roots) == 1
    events = {e["id"] for g in graphs for e in g["events"]}
    assert {g["parent_id"] for g in graphs if g["parent_id"]} <= events


# ------------------------------------------------------------------------------ MobileMem text: round trip
def test_keme_to_mobilemem_to_keme_keeps_every_question_answer_and_evidence(exported, tmp_path):
    import_mobilemem(exported, tmp_path / "back")
    back = {q.id: q for q in Dataset.load(tmp_path / "back").qa}
    original = {q.id: q for q in sample_dataset().qa}
    assert back.keys() == original.keys()
    for qid, item in original.items():
        kept = back[qid]
        assert (kept.question, kept.answer, kept.evidence) == (item.question, item.answer, item.evidence)
        assert (kept.spec, kept.asked_at, kept.type, kept.options) == (
            item.spec,
            item.asked_at,
            item.type,
            item.options,
        )


def test_the_round_trip_keeps_every_message_and_validates(exported, tmp_path):
    import_mobilemem(exported, tmp_path / "back")
    back = {m.id: m for s in Dataset.load(tmp_path / "back").sessions for m in s.messages}
    original = {m.id: m for s in sample_dataset().sessions for m in s.messages}
    assert back.keys() == original.keys()
    assert all(
        (back[i].content, back[i].role, back[i].app, back[i].timestamp)
        == (m.content, m.role, m.app, m.timestamp)
        for i, m in original.items()
    )
    assert validate(tmp_path / "back") == []


# ------------------------------------------------------------------------------ MobileMem text: import
def _mobilemem_file(path: Path) -> Path:
    """A small MobileMem file as the release writes it (not keme's): two sessions, an app record."""

    def message(mid, name, role, content, when, **metadata):
        return {
            "id": mid,
            "name": name,
            "role": role,
            "content": content,
            "timestamp": when,
            "side_note": "",
            "created_at": when,
            "metadata": metadata,
        }

    def pair(qid, question, qtype, form, answers, evidence):
        return {
            "id": qid,
            "question": question,
            "question_type": qtype,
            "question_form": form,
            "golden_answers": answers,
            "difficulty": "easy",
            "topic": ["shopping"],
            "num_hops": 1,
            "num_sub_questions": 0,
            "effective_timestamp": "2025-03-02 10:00:00",
            "source_evidences": [{"id": e} for e in evidence],
            "is_consumed": False,
            "side_note": "",
            "created_at": "2025-03-09 10:00:00",
        }

    sample = {
        "person": {"id": "u1", "name": "Lin Yue"},
        "sessions": [
            {
                "id": "s1",
                "event_id": "e1",
                "side_note": "",
                "created_at": "2025-03-01 09:00:00",
                "messages": [
                    message(
                        "m1",
                        "Taobao",
                        "system",
                        "Order placed: running shoes, 399 CNY",
                        "2025-03-01 09:00:00",
                        app="Taobao",
                        amount="399",
                    ),
                    message("m2", "Lin Yue", "user", "I just ordered running shoes.", "2025-03-01 09:01:00"),
                    message(
                        "m3", "assistant", "assistant", "Noted, new running shoes.", "2025-03-01 09:01:30"
                    ),
                ],
            },
            {
                "id": "s2",
                "event_id": "e2",
                "side_note": "",
                "created_at": "2025-03-05 20:00:00",
                "messages": [
                    message("m4", "Lin Yue", "user", "The shoes fit well.", "2025-03-05 20:00:00"),
                ],
            },
        ],
        "graphs": [{"id": "g1", "parent_id": None, "events": [], "edges": [], "state": "done"}],
        "question_type_toolbook": {
            "question_types": [
                {
                    "name": "single-hop",
                    "qa_pairs": [
                        pair(
                            "q1",
                            "How much were my running shoes?",
                            "single-hop",
                            "open_ended",
                            ["399 CNY"],
                            ["m1"],
                        ),
                        pair(
                            "q2",
                            "What did I buy?\nA. a bike\nB. running shoes\nC. a watch",
                            "single-hop",
                            "single_choice",
                            ["B"],
                            ["m2"],
                        ),
                    ],
                },
                {
                    "name": "Lifestyle Inference",
                    "qa_pairs": [
                        pair(
                            "q3",
                            "How did the shoes turn out?",
                            "Lifestyle Inference",
                            "open_ended",
                            ["They fit"],
                            ["s2", "nowhere"],
                        ),
                    ],
                },
            ]
        },
    }
    path.write_text(json.dumps([sample], ensure_ascii=False))
    return path


@pytest.fixture
def imported(tmp_path) -> tuple[Dataset, dict]:
    stats = import_mobilemem(_mobilemem_file(tmp_path / "mm.json"), tmp_path / "d")
    return Dataset.load(tmp_path / "d"), stats


def test_an_app_record_imports_as_the_apps_system_message(imported):
    data, _ = imported
    first = data.sessions[0].messages[0]
    assert (first.role, first.app, first.content) == (
        "system",
        "Taobao",
        "Order placed: running shoes, 399 CNY",
    )


def test_a_mobilemem_turn_keeps_its_speakers_name(imported):
    data, _ = imported
    assert data.sessions[0].messages[1].speaker == "Lin Yue"


def test_questions_are_asked_a_week_after_the_last_session_as_membase_asks_them(imported):
    data, _ = imported
    assert {q.asked_at for q in data.qa} == {datetime(2025, 3, 5, 20, 0) + timedelta(days=7)}


def test_a_choice_question_gets_its_options_and_a_letter_spec(imported):
    data, _ = imported
    q2 = next(q for q in data.qa if q.id == "q2")
    assert (q2.question, q2.options, q2.format) == (
        "What did I buy?",
        ["a bike", "running shoes", "a watch"],
        "single_choice",
    )
    assert (q2.spec.kind, q2.spec.value) == ("choice", "B")


def test_evidence_naming_a_session_stays_session_level_and_is_counted(imported):
    data, stats = imported
    q3 = next(q for q in data.qa if q.id == "q3")
    assert (q3.evidence, q3.evidence_sessions) == ([], ["s2"])
    assert stats["import"]["evidence_session_level"] == 1 and stats["import"]["evidence_unresolved"] == 1


def test_an_unknown_question_type_is_kept_by_name(imported):
    data, stats = imported
    q3 = next(q for q in data.qa if q.id == "q3")
    assert (q3.type, q3.subtype) == ("single_hop", "mobilemem.Lifestyle Inference")
    assert stats["import"]["unknown_question_type"] == 1


def test_the_fields_names_for_question_types_map_to_ours():
    assert question_type("Multi-Hop") == "multi_hop"
    assert question_type("temporal reasoning") == "temporal_reasoning"
    assert question_type("knowledge-update") == "knowledge_update"
    assert question_type("visual-reasoning") == "visual_reasoning"
    assert question_type("Lifestyle Inference") is None


def test_an_imported_mobilemem_file_validates(imported, tmp_path):
    assert validate(tmp_path / "d") == []


# ------------------------------------------------------------------------------ LongMemEval export
@pytest.fixture(scope="module")
def lme(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("lme") / "lme.json"
    export_longmemeval(sample_dataset(), out)
    return json.loads(out.read_text())


def test_each_question_is_one_longmemeval_instance_with_their_fields(lme):
    assert len(lme) == len(sample_dataset().qa)
    keys = {"question_id", "question_type", "question", "answer", "question_date", "haystack_dates"}
    keys |= {"haystack_session_ids", "haystack_sessions", "answer_session_ids"}
    assert all(keys <= set(i) for i in lme)
    theirs = {"single-session-user", "single-session-assistant", "single-session-preference"}
    theirs |= {"multi-session", "temporal-reasoning", "knowledge-update"}
    assert {i["question_type"] for i in lme} <= theirs
    datetime.strptime(lme[0]["question_date"], DATE_FORMAT)


def test_only_an_evidence_session_has_answer_in_its_id_as_longmemevals_scripts_read_it(lme):
    for instance in lme:
        marked = [i for i in instance["haystack_session_ids"] if "answer" in i]
        assert sorted(marked) == sorted(instance["answer_session_ids"])


def test_an_abstention_question_id_ends_in_abs(lme):
    abstain = {q.id for q in sample_dataset().qa if q.spec.kind == "abstain"}
    assert {i["question_id"] for i in lme if i["question_id"].endswith("_abs")} == {
        f"{q}_abs" for q in abstain
    }


def test_a_haystack_holds_only_what_was_said_before_the_question(lme):
    asked = {q.id: q.asked_at for q in sample_dataset().qa}
    for instance in lme:
        when = asked[instance["question_id"].removesuffix("_abs")]
        assert all(datetime.strptime(d, DATE_FORMAT) <= when for d in instance["haystack_dates"])


def test_has_answer_marks_exactly_the_evidence(lme):
    items = {q.id: q for q in sample_dataset().qa}
    session = {m.id: s.id for s in sample_dataset().sessions for m in s.messages}
    for instance in lme:
        item = items[instance["question_id"].removesuffix("_abs")]
        marked = sum(t["has_answer"] for s in instance["haystack_sessions"] for t in s)
        assert marked == len(item.evidence)
        assert set(instance["answer_session_ids"]) >= {f"answer_{session[m]}" for m in item.evidence}


def test_longmemeval_round_trip_keeps_questions_answers_and_evidence(tmp_path):
    data = sample_dataset()
    export_longmemeval(data, tmp_path / "lme.json")
    import_longmemeval(tmp_path / "lme.json", tmp_path / "back")
    back = {q.id.removesuffix("_abs"): q for q in Dataset.load(tmp_path / "back").qa}
    position = {m.id: (s.id, n) for s in data.sessions for n, m in enumerate(s.messages, start=1)}
    assert back.keys() == {q.id for q in data.qa}
    for item in data.qa:
        kept = back[item.id]
        assert kept.answer == item.answer
        # the importer names a turn <question>:<session>_<turn>; an evidence session is answer_<id>
        expected = [f"{kept.id}:answer_{position[m][0]}_{position[m][1]}" for m in item.evidence]
        assert sorted(kept.evidence) == sorted(expected)
    assert validate(tmp_path / "back") == []


# ------------------------------------------------------------------------------ the commands
def test_export_and_import_commands_report_what_they_wrote(tmp_path, root):
    runner = CliRunner()
    done = runner.invoke(
        app, ["export", "mobilemem", str(root / "data/sample"), "--out", str(tmp_path / "m.json")]
    )
    said = " ".join(done.output.split())
    assert done.exit_code == 0, said
    assert "2 samples" in said and "asked before the last session" in said
    done = runner.invoke(app, ["import", "mobilemem", str(tmp_path / "m.json"), "--out", str(tmp_path / "d")])
    assert done.exit_code == 0 and f"{len(sample_dataset().qa)} QA items" in " ".join(done.output.split())
    done = runner.invoke(
        app, ["export", "longmemeval", str(root / "data/sample"), "--out", str(tmp_path / "l.json")]
    )
    qa = sample_dataset().qa
    abstentions = sum(q.spec.kind == "abstain" for q in qa)
    assert done.exit_code == 0 and f"{len(qa)} instances ({abstentions} _abs)" in " ".join(
        done.output.split()
    )

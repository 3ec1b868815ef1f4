"""Bad benchmark files through `keme import` / `keme export`: every record that cannot be used is counted,
never a traceback.

A bad record is skipped and noted (probe outcome `ok` when the import notes
it, `silent` when it imports without a word); a file with nothing usable, an
unreadable file, or an output that would clobber something is refused
(`clear`). The CLI probes prove the boundary; the in-process ones are fast.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from probe import ROOT, raises_clearly, record, refuses, works

from eval.importers.locomo import export_locomo, import_locomo
from eval.importers.longmemeval import export_longmemeval, import_longmemeval
from eval.importers.mobilemem import export_mobilemem, import_mobilemem
from eval.importers.mobilemem_omni import import_mobilemem_omni
from keme.dataset import Dataset
from keme.errors import KemeError
from keme.validate import validate

pytestmark = pytest.mark.fault


def _turns(number: int, tag: str = "") -> list[dict[str, Any]]:
    return [
        {"speaker": "Ann", "dia_id": f"D{number}:1", "text": f"Ann's line {tag} in session {number}"},
        {"speaker": "Bob", "dia_id": f"D{number}:2", "text": f"Bob's line {tag} in session {number}"},
    ]


def locomo_sample(sample_id: Any = "c1", tag: str | None = None) -> dict[str, Any]:
    tag = str(sample_id) if tag is None else tag
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": _turns(1, tag),
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": _turns(2, tag),
        },
        "qa": [{"question": "What does Ann say?", "answer": "her line", "evidence": ["D1:1"], "category": 4}],
    }


def lme_instance(qid: Any = "q1", tag: str | None = None) -> dict[str, Any]:
    tag = str(qid) if tag is None else tag
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where do I work?",
        "answer": "Acme",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["s1", "s2"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/25 (Thu) 10:02"],
        "haystack_sessions": [
            [
                {"role": "user", "content": f"{tag}: I work at Acme", "has_answer": True},
                {"role": "assistant", "content": "Noted."},
            ],
            [
                {"role": "user", "content": f"{tag}: tips for a trip?"},
                {"role": "assistant", "content": "Pack light."},
            ],
        ],
        "answer_session_ids": ["s1"],
    }


def _file(tmp_path: Path, records: Any, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def notes_it(importer: Callable[[Path, Path], dict], path: Path, out: Path, kind: str) -> dict:
    """In-process probe: the import must succeed, note `kind`, and give a dataset that validates."""
    try:
        stats = importer(path, out)
    except KemeError as exc:
        record("clear")
        raise AssertionError(f"refused instead of skipping and counting: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - the probe classifies it
        record("crash")
        raise AssertionError(f"crash: {type(exc).__name__}: {exc}") from exc
    if not stats.get("import", {}).get(kind):
        record("silent")
        raise AssertionError(f"imported without noting {kind}: {stats.get('import')}")
    problems = validate(out)
    record("ok" if not problems else "silent")
    assert problems == [], problems
    return stats


# -- LoCoMo: one bad thing each, skipped and counted


def _sample_with(change: Callable[[dict], None]) -> list[dict]:
    bad = locomo_sample("c1")
    change(bad)
    return [bad, locomo_sample("c2")]


LOCOMO_BAD_RECORDS = {
    "turn_not_an_object": (lambda s: s["conversation"]["session_1"].append("just text"), "turns_skipped"),
    "turn_a_list": (lambda s: s["conversation"]["session_1"].append([1, 2]), "turns_skipped"),
    "turns_not_a_list": (lambda s: s["conversation"].update(session_2="hello"), "sessions_skipped"),
    "int_date": (lambda s: s["conversation"].update(session_1_date_time=20230508), "unparsed_dates"),
    "null_date": (lambda s: s["conversation"].update(session_2_date_time=None), "unparsed_dates"),
    "unparseable_date": (
        lambda s: s["conversation"].update(session_1_date_time="yesterday-ish"),
        "unparsed_dates",
    ),
    "year_9999": (
        lambda s: s["conversation"].update(session_2_date_time="11:59 pm on 31 December, 9999"),
        "unparsed_dates",
    ),
    "null_speaker": (lambda s: s["conversation"]["session_1"][0].update(speaker=None), "turns_skipped"),
    "int_speaker": (lambda s: s["conversation"]["session_1"][0].update(speaker=7), "turns_skipped"),
    "int_dia_id": (lambda s: s["conversation"]["session_1"][1].update(dia_id=3), "turns_skipped"),
    "text_an_object": (lambda s: s["conversation"]["session_1"][1].update(text={"a": 1}), "turns_skipped"),
    "text_deeply_nested": (
        lambda s: s["conversation"]["session_1"][1].update(text=json.loads("[" * 500 + "]" * 500)),
        "turns_skipped",
    ),
    "lone_surrogate_in_text": (
        lambda s: s["conversation"]["session_1"][0].update(text="a \ud800 b"),
        "lone_surrogates_replaced",
    ),
    "lone_surrogate_in_sample_id": (lambda s: s.update(sample_id="c\udc00"), "ids_renamed"),
    "duplicate_dia_id": (
        lambda s: s["conversation"]["session_2"][0].update(dia_id="D1:1"),
        "duplicate_turn_ids",
    ),
    "huge_dia_id": (
        lambda s: s["conversation"]["session_1"][0].update(dia_id="D" + "9" * 30 + ":1"),
        "turns_without_dia_id",
    ),
    "out_of_order_dates": (
        lambda s: s["conversation"].update(session_1_date_time="1:00 pm on 1 July, 2023"),
        "sessions_out_of_order",
    ),
    "same_date_twice": (
        lambda s: s["conversation"].update(session_2_date_time="1:56 pm on 8 May, 2023"),
        "sessions_moved",
    ),
    "repeated_session_number": (
        lambda s: s["conversation"].update(session_01=_turns(1, "x")),
        "sessions_skipped",
    ),
    "huge_session_number": (
        lambda s: s["conversation"].update({"session_" + "9" * 40: _turns(3, "x")}),
        "sessions_skipped",
    ),
    "no_conversation": (lambda s: s.pop("conversation"), "samples_skipped"),
    "conversation_a_list": (lambda s: s.update(conversation=[1]), "samples_skipped"),
    "no_speaker_a": (lambda s: s["conversation"].pop("speaker_a"), "samples_skipped"),
    "sample_id_an_object": (lambda s: s.update(sample_id={"x": 1}), "sample_ids_replaced"),
    "qa_not_a_list": (lambda s: s.update(qa="what?"), "qa_skipped"),
    "qa_item_not_an_object": (lambda s: s["qa"].append(5), "qa_skipped"),
    "question_null": (lambda s: s["qa"][0].update(question=None), "qa_skipped"),
    "category_a_string": (lambda s: s["qa"][0].update(category="4"), "qa_skipped"),
    "category_unknown": (lambda s: s["qa"][0].update(category=9), "unknown_category"),
    "answer_missing": (lambda s: s["qa"][0].pop("answer"), "qa_skipped"),
    "evidence_garbage": (
        lambda s: s["qa"][0].update(evidence=[{"x": 1}, 3, "nothing"]),
        "evidence_pieces_not_ids",
    ),
    "evidence_out_of_range": (lambda s: s["qa"][0].update(evidence=["D40:1"]), "evidence_unresolved"),
}


@pytest.mark.parametrize("case", sorted(LOCOMO_BAD_RECORDS))
def test_locomo_bad_record_is_skipped_and_counted(tmp_path, case):
    change, kind = LOCOMO_BAD_RECORDS[case]
    notes_it(import_locomo, _file(tmp_path, _sample_with(change)), tmp_path / "out", kind)


def test_locomo_repeated_sample_id_keeps_both(tmp_path):
    stats = notes_it(
        import_locomo,
        _file(tmp_path, [locomo_sample("c1"), locomo_sample("c1", tag="other")]),
        tmp_path / "out",
        "duplicate_sample_ids",
    )
    assert stats["personas"] == 2


# -- LongMemEval: one bad thing each, skipped and counted


def _instance_with(change: Callable[[dict], None]) -> list[dict]:
    bad = lme_instance("q1")
    change(bad)
    return [bad, lme_instance("q2")]


LME_BAD_RECORDS = {
    "question_id_null": (lambda i: i.update(question_id=None), "instances_skipped"),
    "no_question_id": (lambda i: i.pop("question_id"), "instances_skipped"),
    "question_id_a_list": (lambda i: i.update(question_id=[1]), "instances_skipped"),
    "answer_null": (lambda i: i.update(answer=None), "instances_skipped"),
    "haystack_not_a_list": (lambda i: i.update(haystack_sessions="x"), "instances_skipped"),
    "session_not_a_list": (
        lambda i: i["haystack_sessions"].__setitem__(1, {"role": "user"}),
        "sessions_skipped",
    ),
    "turn_not_an_object": (lambda i: i["haystack_sessions"][1].append("hi"), "turns_skipped"),
    "role_null": (lambda i: i["haystack_sessions"][1][0].update(role=None), "turns_skipped"),
    "content_an_int": (lambda i: i["haystack_sessions"][1][0].update(content=5), "turns_skipped"),
    "has_answer_a_word": (lambda i: i["haystack_sessions"][1][0].update(has_answer="maybe"), "turns_skipped"),
    "unknown_role": (lambda i: i["haystack_sessions"][1][1].update(role="system"), "turns_unknown_role"),
    "int_date": (lambda i: i["haystack_dates"].__setitem__(0, 20230520), "unparsed_dates"),
    "dates_too_short": (lambda i: i["haystack_dates"].pop(), "unparsed_dates"),
    "question_date_bad": (lambda i: i.update(question_date="soon"), "unparsed_dates"),
    "session_ids_too_short": (lambda i: i["haystack_session_ids"].pop(), "session_ids_missing"),
    "session_id_an_object": (
        lambda i: i["haystack_session_ids"].__setitem__(1, {"a": 1}),
        "session_ids_missing",
    ),
    "duplicate_session_ids": (lambda i: i.update(haystack_session_ids=["s1", "s1"]), "duplicate_session_ids"),
    "same_date_twice": (lambda i: i.update(haystack_dates=["2023/05/20 (Sat) 02:21"] * 2), "sessions_moved"),
    "dates_out_of_order": (
        lambda i: i.update(haystack_dates=["2023/05/25 (Thu) 10:02", "2023/05/20 (Sat) 02:21"]),
        "sessions_out_of_order",
    ),
    "lone_surrogate": (
        lambda i: i["haystack_sessions"][0][0].update(content="\udfff"),
        "lone_surrogates_replaced",
    ),
    "unknown_question_type": (lambda i: i.update(question_type="vibes"), "unknown_question_type"),
    "answer_session_unknown": (
        lambda i: i.update(answer_session_ids=["nope"]),
        "answer_session_ids_unresolved",
    ),
}


@pytest.mark.parametrize("case", sorted(LME_BAD_RECORDS))
def test_longmemeval_bad_record_is_skipped_and_counted(tmp_path, case):
    change, kind = LME_BAD_RECORDS[case]
    notes_it(import_longmemeval, _file(tmp_path, _instance_with(change)), tmp_path / "out", kind)


def test_longmemeval_a_record_that_is_not_an_object_is_skipped(tmp_path):
    notes_it(
        import_longmemeval, _file(tmp_path, ["q0", lme_instance("q1")]), tmp_path / "out", "instances_skipped"
    )


def test_longmemeval_repeated_question_id_keeps_both(tmp_path):
    stats = notes_it(
        import_longmemeval,
        _file(tmp_path, [lme_instance("q1"), lme_instance("q1", tag="other")]),
        tmp_path / "out",
        "duplicate_question_ids",
    )
    assert stats["personas"] == 2


# -- MobileMem text: one bad thing each, skipped and counted


def mobilemem_sample(pid: Any = "u1") -> dict[str, Any]:
    def message(mid: str, role: str, content: str, when: str) -> dict[str, Any]:
        return {
            "id": f"{pid}-{mid}",
            "name": role,
            "role": role,
            "content": content,
            "timestamp": when,
            "side_note": "",
            "created_at": when,
            "metadata": {},
        }

    pair = {
        "id": f"{pid}-q1",
        "question": "Where do I work?",
        "question_type": "single-hop",
        "question_form": "open_ended",
        "golden_answers": ["Acme"],
        "difficulty": "easy",
        "topic": [],
        "num_hops": 1,
        "num_sub_questions": 0,
        "effective_timestamp": "2023-05-30 10:00:00",
        "source_evidences": [{"id": f"{pid}-m1"}],
        "is_consumed": False,
        "side_note": "",
        "created_at": "2023-05-30 10:00:00",
    }
    return {
        "person": {"id": pid, "name": "Ann"},
        "sessions": [
            {
                "id": f"{pid}-s1",
                "event_id": "e1",
                "side_note": "",
                "created_at": "2023-05-20 09:00:00",
                "messages": [
                    message("m1", "user", f"{pid}: I work at Acme", "2023-05-20 09:00:00"),
                    message("m2", "assistant", "Noted.", "2023-05-20 09:00:30"),
                ],
            },
            {
                "id": f"{pid}-s2",
                "event_id": "e2",
                "side_note": "",
                "created_at": "2023-05-25 09:00:00",
                "messages": [message("m3", "user", f"{pid}: tips for a trip?", "2023-05-25 09:00:00")],
            },
        ],
        "graphs": [],
        "question_type_toolbook": {"question_types": [{"name": "single-hop", "qa_pairs": [pair]}]},
    }


def _mobilemem_with(change: Callable[[dict], None]) -> list[dict]:
    bad = mobilemem_sample("u1")
    change(bad)
    return [bad, mobilemem_sample("u2")]


def _message(sample: dict, session: int = 1, n: int = 0) -> dict:
    return sample["sessions"][session]["messages"][n]


def _pair(sample: dict) -> dict:
    return sample["question_type_toolbook"]["question_types"][0]["qa_pairs"][0]


MOBILEMEM_BAD_RECORDS = {
    "no_person": (lambda s: s.pop("person"), "samples_skipped"),
    "person_id_null": (lambda s: s["person"].update(id=None), "person_ids_replaced"),
    "message_not_an_object": (lambda s: s["sessions"][1]["messages"].append("hi"), "messages_skipped"),
    "timestamp_not_iso": (lambda s: _message(s).update(timestamp="yesterday"), "unparsed_dates"),
    "content_an_int": (lambda s: _message(s).update(content=5), "messages_skipped"),
    "unknown_role": (lambda s: _message(s).update(role="narrator"), "messages_unknown_role"),
    "times_out_of_order": (
        lambda s: s["sessions"][0]["messages"][1].update(timestamp="2023-05-20 08:00:00"),
        "message_times_moved",
    ),
    "session_not_an_object": (lambda s: s["sessions"].append([1]), "sessions_skipped"),
    "no_golden_answers": (lambda s: _pair(s).update(golden_answers=[]), "empty_golds"),
    "question_null": (lambda s: _pair(s).update(question=None), "qa_skipped"),
    "unknown_form": (lambda s: _pair(s).update(question_form="essay"), "unknown_question_form"),
    "unknown_type": (lambda s: _pair(s).update(question_type="vibes"), "unknown_question_type"),
    "evidence_unknown": (lambda s: _pair(s).update(source_evidences=[{"id": "nope"}]), "evidence_unresolved"),
    "duplicate_message_ids": (lambda s: _message(s, 1).update(id="u1-m1"), "duplicate_message_ids"),
    "lone_surrogate": (lambda s: _message(s).update(content="\udfff"), "lone_surrogates_replaced"),
}


@pytest.mark.parametrize("case", sorted(MOBILEMEM_BAD_RECORDS))
def test_mobilemem_bad_record_is_skipped_and_counted(tmp_path, case):
    change, kind = MOBILEMEM_BAD_RECORDS[case]
    notes_it(import_mobilemem, _file(tmp_path, _mobilemem_with(change)), tmp_path / "out", kind)


# -- MobileMem-Omni: one bad thing each, skipped and counted

SHOT = "image/uid1/music_screenshots/1_music_0.png"


def _omni_images(*extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "person_avatar": None,
        "person_avatar_description": None,
        "event_scene": None,
        "event_scene_description": None,
        "extra_images": list(extra),
    }


def omni_release(root: Path, change: Callable[[list, list], None] = lambda users, questions: None) -> Path:
    """A one-user release in the published shape, with a shared screenshot (the bytes need not be a real PNG
    to be copied)."""

    def turn(n: int, content: str) -> dict[str, Any]:
        return {"turn": n, "role": "user", "content": content, "content_type": "text"}

    def session(number: int, day: str, dialogue: list, images: dict[str, Any]) -> dict[str, Any]:
        return {
            "session_id": f"1_{number}",
            "event_id": number,
            "parent_event_id": None,
            "event_name": "an evening",
            "event_start_time": f"2025-04-{day} 19:00:00",
            "event_end_time": f"2025-04-{day} 19:20:00",
            "dialogue": dialogue,
            "image_refs": images,
            "memory_points": [],
        }

    shared = {"turn": 2, "role": "user", "image_inline": SHOT, "content_type": "image"}
    music = _omni_images({"type": "music", "file": SHOT})
    users = [
        {
            "language": "English",
            "Basic_Profile": {"name": "Ann", "uuid": 1, "nationality": "American"},
            "Init_State": {"location": "United States, Boston"},
            "sessions": [
                session(0, "01", [turn(1, "What I ran to."), shared], music),
                session(1, "05", [turn(1, "A hike on Sunday.")], _omni_images()),
            ],
        }
    ]

    def question(n: int, kind: str, evidence: dict[str, Any]) -> dict[str, Any]:
        return {
            "question_id": f"1_q_{n}",
            "question": "What did I plan?",
            "answer": "a hike",
            "question_format": "open_ended",
            "question_type": kind,
            "difficulty": "easy",
            "evidence": [{"event_id": evidence["session_id"][2:], "explanation": "", **evidence}],
            "source_session_ids": [evidence["session_id"]],
            "uuid": 1,
        }

    questions = [
        question(0, "single_hop", {"session_id": "1_1", "image_path": None}),
        question(1, "visual_reasoning", {"session_id": "1_0", "image_path": SHOT}),
    ]
    change(users, questions)
    root.mkdir()
    (root / "data.jsonl").write_text("\n".join(json.dumps(u) for u in users), encoding="utf-8")
    (root / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions), encoding="utf-8")
    with zipfile.ZipFile(root / "image.zip", "w") as archive:
        archive.writestr(SHOT, b"\x89PNG\r\n\x1a\n")
    return root


def _omni_turn(users: list, session: int = 0, n: int = 1) -> dict:
    return users[0]["sessions"][session]["dialogue"][n]


def _omni_session(users: list, session: int = 0) -> dict:
    return users[0]["sessions"][session]


OMNI_BAD_RECORDS = {
    "image_not_in_the_zip": (
        lambda u, q: _omni_turn(u).update(image_inline="image/uid1/x.png"),
        "images_missing",
    ),
    "image_path_leaves_the_release": (
        lambda u, q: _omni_turn(u).update(image_inline="../../../../etc/hostname.png"),
        "images_missing",
    ),
    "image_inline_a_number": (lambda u, q: _omni_turn(u).update(image_inline=7), "turns_skipped"),
    "image_refs_a_list": (lambda u, q: _omni_session(u).update(image_refs=[SHOT]), "image_refs_unreadable"),
    "extra_image_without_a_file": (
        lambda u, q: _omni_session(u)["image_refs"]["extra_images"].append({"type": "book"}),
        "image_refs_unreadable",
    ),
    "no_start_time": (lambda u, q: _omni_session(u, 1).update(event_start_time=None), "unparsed_dates"),
    "turn_not_an_object": (lambda u, q: _omni_session(u)["dialogue"].append(7), "turns_skipped"),
    "session_not_an_object": (lambda u, q: u[0]["sessions"].append("1_2"), "sessions_skipped"),
    "user_not_an_object": (lambda u, q: u.append([1]), "users_skipped"),
    "user_without_uuid": (lambda u, q: u[0]["Basic_Profile"].pop("uuid"), "user_ids_replaced"),
    "lone_surrogate_in_the_profile": (
        lambda u, q: u[0]["Init_State"].update(location="\ud800"),
        "lone_surrogates_replaced",
    ),
    "question_of_nobody": (
        lambda u, q: q[0].update(uuid=None, question_id="lost", evidence=[], source_session_ids=[]),
        "qa_skipped",
    ),
    "unknown_question_type": (lambda u, q: q[0].update(question_type="vibes"), "unknown_question_type"),
    "unknown_format": (lambda u, q: q[0].update(question_format="essay"), "unknown_question_form"),
    "choice_without_option_lines": (
        lambda u, q: q[0].update(question_format="multiple_choice"),
        "choice_options_unread",
    ),
    "evidence_not_an_object": (lambda u, q: q[0]["evidence"].append(7), "evidence_unresolved"),
}


@pytest.mark.parametrize("case", sorted(OMNI_BAD_RECORDS))
def test_omni_bad_record_is_skipped_and_counted(tmp_path, case):
    release = omni_release(tmp_path / "release", OMNI_BAD_RECORDS[case][0])
    notes_it(import_mobilemem_omni, release, tmp_path / "out", OMNI_BAD_RECORDS[case][1])


def test_omni_without_a_usable_question_is_refused(tmp_path):
    release = omni_release(tmp_path / "release", lambda u, q: [item.update(question=None) for item in q])
    raises_clearly(
        lambda: import_mobilemem_omni(release, tmp_path / "out"), KemeError, match="no usable question"
    )


def test_omni_an_image_larger_than_allowed_is_skipped_and_counted(tmp_path, monkeypatch):
    monkeypatch.setattr("eval.importers.mobilemem_omni.MAX_IMAGE_BYTES", 4)
    notes_it(import_mobilemem_omni, omni_release(tmp_path / "release"), tmp_path / "out", "images_unreadable")


def test_omni_a_corrupt_image_in_the_zip_is_refused_naming_it(tmp_path):
    release = omni_release(tmp_path / "release")
    with zipfile.ZipFile(release / "image.zip", "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(SHOT, b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    data = (release / "image.zip").read_bytes()
    at = data.index(b"\x89PNG") + 10
    (release / "image.zip").write_bytes(data[:at] + b"\x01" + data[at + 1 :])  # its CRC no longer matches
    raises_clearly(
        lambda: import_mobilemem_omni(release, tmp_path / "out"),
        KemeError,
        match=f"member '{SHOT}' is damaged",
    )


def test_omni_a_broken_image_zip_is_refused(tmp_path):
    release = omni_release(tmp_path / "release")
    (release / "image.zip").write_bytes(b"not a zip")
    raises_clearly(lambda: import_mobilemem_omni(release, tmp_path / "out"), KemeError, match="not a zip")
    assert not (tmp_path / "out").exists()


# -- files that cannot be imported at all: refused in-process

UNREADABLE = {
    "empty_file": b"",
    "only_whitespace": b"  \n\n",
    "a_number": b"42",
    "an_array_of_numbers": b"[1, 2, 3]",
    "truncated_array": b'[{"sample_id": "c1", ',
    "deep_nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep_nesting_in_a_line": b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    "huge_integer": b'[{"sample_id": ' + b"9" * 5000 + b"}]",
    "invalid_utf8": b'[{"sample_id": "c\xff1"}]',
    "utf16": json.dumps([locomo_sample()]).encode("utf-16"),
    "bad_json_line": b'{"sample_id": "c1"}\n{nope\n',
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
@pytest.mark.parametrize(
    "importer",
    [import_locomo, import_longmemeval, import_mobilemem],
    ids=["locomo", "longmemeval", "mobilemem"],
)
def test_an_unusable_file_is_refused(tmp_path, case, importer):
    path = tmp_path / "in.json"
    path.write_bytes(UNREADABLE[case])
    raises_clearly(lambda: importer(path, tmp_path / "out"), KemeError, match=r"in\.json")
    assert not (tmp_path / "out").exists()


def test_a_missing_file_is_refused(tmp_path):
    raises_clearly(
        lambda: import_locomo(tmp_path / "nope.json", tmp_path / "out"), KemeError, match="cannot read"
    )


def test_samples_with_nothing_usable_are_refused(tmp_path):
    path = _file(tmp_path, [{"sample_id": "c1"}, {"sample_id": "c2", "conversation": {"speaker_a": "Ann"}}])
    raises_clearly(
        lambda: import_locomo(path, tmp_path / "out"), KemeError, match="nothing usable in 2 record"
    )


# -- through the CLI: the boundary prints one message


def test_cli_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_bytes(b'[\n{"sample_id": "c\xff1"}\n]')
    refuses(
        ["keme", "import", "locomo", str(path), "--out", str(tmp_path / "out")],
        match=r"locomo\.json:2: not valid UTF-8",
    )


def test_cli_deep_nesting_is_refused(tmp_path):
    path = tmp_path / "lme.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    refuses(
        ["keme", "import", "longmemeval", str(path), "--out", str(tmp_path / "out")],
        match="nested too deeply",
    )


def test_cli_bad_records_are_listed_by_position(tmp_path):
    sample = locomo_sample("c1")
    sample["conversation"]["session_1"][0]["speaker"] = None
    sample["conversation"]["session_1"].append(["not", "a", "turn"])
    sample["conversation"]["session_2_date_time"] = 20230627
    run = works(["keme", "import", "locomo", str(_file(tmp_path, [sample])), "--out", str(tmp_path / "out")])
    assert "sample 1 (c1), session_1, turn 1: speaker" in run.output
    assert "session_2_date_time: not a string" in run.output
    assert "turns_skipped 2" in run.output


def test_cli_lone_surrogates_are_replaced(tmp_path):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([lme_instance("q1")]).replace("Pack light.", "\\udc80 Pack light."))
    run = works(["keme", "import", "longmemeval", str(path), "--out", str(tmp_path / "out")])
    assert "lone_surrogates_replaced 1" in run.output


def test_cli_nothing_usable_is_refused(tmp_path):
    refuses(
        [
            "keme",
            "import",
            "locomo",
            str(_file(tmp_path, [{"sample_id": "c1"}])),
            "--out",
            str(tmp_path / "out"),
        ],
        match="nothing usable",
    )


def test_cli_an_existing_dataset_is_refused_without_force(tmp_path):
    shutil.copytree(ROOT / "data/sample", tmp_path / "ds")
    before = (tmp_path / "ds/qa.jsonl").read_bytes()
    source = str(_file(tmp_path, [locomo_sample()]))
    refuses(
        ["keme", "import", "locomo", source, "--out", str(tmp_path / "ds")],
        match="already holds a keme dataset.*--force",
    )
    assert (tmp_path / "ds/qa.jsonl").read_bytes() == before
    works(["keme", "import", "locomo", source, "--out", str(tmp_path / "ds"), "--force"])
    assert validate(tmp_path / "ds") == []


def test_cli_a_non_dataset_directory_is_refused_even_with_force(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos/holiday.jpg").write_bytes(b"\xff\xd8jpg")
    refuses(
        [
            "keme",
            "import",
            "longmemeval",
            str(_file(tmp_path, [lme_instance()])),
            "--out",
            str(tmp_path / "photos"),
            "--force",
        ],
        match="not empty and holds no keme dataset",
    )
    assert [p.name for p in (tmp_path / "photos").iterdir()] == ["holiday.jpg"]


def test_cli_an_output_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    refuses(
        ["keme", "import", "locomo", str(_file(tmp_path, [locomo_sample()])), "--out", str(tmp_path / "out")],
        match="not a directory",
    )


# -- export


def _sample_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "data/sample", tmp_path / "ds")
    return tmp_path / "ds"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    "export",
    [export_locomo, export_mobilemem, export_longmemeval],
    ids=["locomo", "mobilemem", "longmemeval"],
)
def test_export_dangling_evidence_is_refused(tmp_path, export):
    data = _sample_copy(tmp_path)
    _edit(data / "qa.jsonl", '"evidence":["', '"evidence":["p01-s9999-m01","')
    raises_clearly(lambda: export(Dataset.load(data), tmp_path / "x.json"), KemeError, match="evidence")


def test_export_question_of_an_unknown_persona_is_refused(tmp_path):
    data = _sample_copy(tmp_path)
    _edit(data / "qa.jsonl", '"persona_id":"p01"', '"persona_id":"p99"')
    raises_clearly(
        lambda: export_locomo(Dataset.load(data), tmp_path / "x.json"), KemeError, match="unknown persona p99"
    )


def test_export_duplicate_persona_is_refused(tmp_path):
    data = _sample_copy(tmp_path)
    first = (data / "personas.jsonl").read_text(encoding="utf-8").splitlines()[0]
    with (data / "personas.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(first + "\n")
    raises_clearly(
        lambda: export_locomo(Dataset.load(data), tmp_path / "x.json"), KemeError, match="occurs twice"
    )


def test_export_into_the_dataset_is_refused(tmp_path):
    data = _sample_copy(tmp_path)
    raises_clearly(
        lambda: export_locomo(Dataset.load(data), data / "qa.jsonl"), KemeError, match="inside the dataset"
    )


def test_cli_export_of_a_dataset_with_an_unsafe_id_is_refused(tmp_path):
    data = _sample_copy(tmp_path)
    _edit(data / "personas.jsonl", '"id":"p01"', '"id":"../p01"')
    refuses(
        ["keme", "export", "locomo", str(data), "--out", str(tmp_path / "x.json")],
        match=r"personas\.jsonl:1.*'\.\./p01'",
    )


def test_cli_export_of_a_missing_dataset_is_refused(tmp_path):
    refuses(
        ["keme", "export", "locomo", str(tmp_path / "nope"), "--out", str(tmp_path / "x.json")],
        match="no manifest|no such directory",
    )


def test_cli_export_to_a_directory_is_refused(tmp_path):
    refuses(
        ["keme", "export", "locomo", str(ROOT / "data/sample"), "--out", str(tmp_path)],
        match="is a directory",
    )


def test_cli_export_round_trip_works(tmp_path):
    works(["keme", "export", "locomo", str(ROOT / "data/sample"), "--out", str(tmp_path / "x.json")])
    works(["keme", "import", "locomo", str(tmp_path / "x.json"), "--out", str(tmp_path / "back")])

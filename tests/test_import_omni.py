"""`keme import mobilemem-omni` on a release in the published shape (tests/fixtures/omni_release: two users,
one English and one Chinese) and on the pipeline's per-stage files (its `stages/` folder)."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from eval.importers.mobilemem_omni import choices, image_key, import_mobilemem_omni, quoted_turn
from keme.cli import app
from keme.dataset import Dataset
from keme.errors import KemeError
from keme.models import Message, QAItem
from keme.validate import validate

RELEASE = ROOT / "tests/fixtures/omni_release"
CAI = "image/uid0/kg_reference_photos/0_蔡雪宁_avatar.png"


class _LegacyName(zipfile.ZipInfo):
    """A member whose name is stored as GB18030 bytes without the UTF-8 flag, as Windows zip tools do."""

    def __init__(self, name: str) -> None:
        self._raw = name.encode("gb18030")
        super().__init__(self._raw.decode("cp437"))

    def _encodeFilenameFlags(self) -> tuple[bytes, int]:  # noqa: N802 - zipfile's name
        return self._raw, self.flag_bits & ~0x800


def _zip_images(source: Path, archive: Path) -> None:
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted((source / "image").rglob("*.png")):
            name = path.relative_to(source).as_posix()
            out.writestr(_LegacyName(name) if name == CAI else name, path.read_bytes())


def _release(root: Path) -> Path:
    """The fixture release as it is downloaded: data.jsonl, questions.jsonl and image.zip."""
    root.mkdir(parents=True)
    for name in ("data.jsonl", "questions.jsonl"):
        shutil.copy(RELEASE / name, root / name)
    _zip_images(RELEASE, root / "image.zip")
    return root


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[Path, dict, Dataset]:
    tmp = tmp_path_factory.mktemp("omni")
    stats = import_mobilemem_omni(_release(tmp / "release"), tmp / "out")
    return tmp / "out", stats, Dataset.load(tmp / "out")


def _message(data: Dataset, mid: str) -> Message:
    return next(m for s in data.sessions for m in s.messages if m.id == mid)


def _qa(data: Dataset) -> dict[str, QAItem]:
    return {q.id: q for q in data.qa}


# ------------------------------------------------------------------------------------ users, sessions
def test_each_user_is_a_persona_named_by_its_basic_profile_uuid(imported):
    data = imported[2]
    assert {p.id: p.name for p in data.personas} == {"10": "Michael Carter", "0": "王景川"}


def test_language_and_country_are_the_records(imported):
    data = imported[2]
    assert {p.id: (p.language, p.country) for p in data.personas} == {"10": ("en", "US"), "0": ("zh", "CN")}


def test_a_persona_keeps_what_keme_has_no_model_for_verbatim(imported):
    wang = next(p for p in imported[2].personas if p.id == "0")
    assert wang.source["Init_State"]["location"] == "中国, 合肥"
    assert wang.source["Important_Dates"]["festivals"] == [{"day": "元旦", "date": "2025-01-01"}]
    first = wang.source["sessions"][0]
    assert first["memory_points"][0]["memory_content"] == "王景川元旦的年度规划重点是婚礼、差旅和理财。"
    assert "dialogue" not in first  # the dialogue is the messages


def test_sessions_keep_the_release_ids_and_event_times(imported):
    sessions = {s.id: s for s in imported[2].sessions}
    assert set(sessions) == {"10_0", "10_1", "0_0", "0_1"}
    assert sessions["10_0"].messages[1].timestamp == datetime(2025, 1, 1, 10, 0)  # after the album's record
    assert len(sessions["10_0"].messages) == 15
    assert sessions["10_1"].event_id == "1_1"
    assert [s.language for s in sessions.values()] == ["en", "en", "zh", "zh"]


# -------------------------------------------------------------------------------------------- images
def test_an_image_turn_shares_its_file_with_its_description_as_caption(imported):
    root, _, data = imported
    page = _message(data, "10_0:t12")
    (record,) = [r for r in data.images if r.message_id == "10_0:t12"]
    assert page.content == "" and page.images == [record.path]
    assert page.captions == [
        "The consecutive first page of the same long group chat screenshot, 2 pages total."
    ]
    assert hashlib.sha256((root / record.path).read_bytes()).hexdigest() == record.sha256
    assert (record.width, record.height, record.about["kind"]) == (2, 5, "group_chat")


def test_an_image_without_a_description_is_captioned_by_its_kind_in_the_users_language(imported):
    data = imported[2]
    assert _message(data, "10_0:t9").captions == ["a screenshot of a music player"]
    assert _message(data, "0_0:t11").captions == ["电子书页面截图"]


def test_the_images_a_session_holds_beyond_its_turns_open_it_as_the_albums_record(imported):
    """No turn is made to share an image it never shared: the session's other images (avatar, event scene)
    are one app record of the phone's album, the session's first message."""
    data = imported[2]
    opening = _message(data, "10_0:album")
    assert (opening.role, opening.app, opening.content) == ("system", "Photos", "")
    assert next(s for s in data.sessions if s.id == "10_0").messages[0] == opening
    assert _message(data, "10_0:t1").images == []
    assert opening.captions == [
        "A man eating a burrito alone at a small table by the window.",
        "a chat member's profile photo",
    ]
    shared = {r.about["source_path"]: r.about["shared"] for r in data.images if r.message_id == "10_0:album"}
    assert shared == {
        "image/uid10/camera_photos/10_event_0.png": "with_session",
        "image/uid10/kg_reference_photos/10_Liam O'Brien_avatar.png": "with_session",
    }
    assert _message(data, "10_1:album").captions == ["the user's profile photo"]


def test_an_image_shared_in_several_sessions_is_one_file(imported):
    _, stats, data = imported
    avatars = {r.path for r in data.images if r.about["source_path"].endswith("10_person_0.png")}
    assert len(avatars) == 1 and stats["images"] == 14 and stats["image_files"] == 12


def test_a_zip_name_stored_without_its_utf8_flag_is_found(imported):
    data = imported[2]
    (record,) = [r for r in data.images if r.about["source_path"] == CAI]
    assert record.message_id == "0_0:t14" and record.caption == "蔡雪宁的头像：长发，浅色毛衣。"
    assert "images_missing" not in imported[1]["import"]


def test_images_are_counted_by_kind(imported):
    assert imported[1]["images_by_kind"] == {
        "book": 1,
        "event_scene": 3,
        "group_chat": 2,
        "group_chat_member_avatar": 2,
        "music": 1,
        "person_avatar": 4,
        "ticket": 1,
    }


def test_an_extracted_image_folder_gives_the_same_images_as_the_zip(imported, tmp_path):
    stats = import_mobilemem_omni(RELEASE, tmp_path / "out")
    from_folder = {r.id: r.sha256 for r in Dataset.load(tmp_path / "out").images}
    assert from_folder == {r.id: r.sha256 for r in imported[2].images} and stats["images"] == 14


# ------------------------------------------------------------------------------------------ questions
def test_a_multiple_choice_question_gets_its_options_and_a_text_without_them(imported):
    item = _qa(imported[2])["0_q_0"]
    assert item.question == "元旦早晨那次规划里，我最后把目标重点放在了哪三件事上？"
    assert item.options[:2] == ["婚礼、购车和理财", "婚礼、差旅和理财"] and len(item.options) == 6
    assert (item.format, item.spec.kind, item.spec.value, item.spec.aliases) == (
        "single_choice",
        "choice",
        "B",
        ["婚礼、差旅和理财"],
    )
    assert item.proof.args.source_fields["question"].endswith("\nF. 婚礼、学习和出游")
    assert item.proof.args.source_fields["question_format"] == "multiple_choice"


def test_a_multiple_choice_abstention_expects_its_cannot_answer_option(imported):
    item = _qa(imported[2])["0_q_4"]
    assert (item.type, item.spec.kind, item.spec.value) == ("abstention", "choice", "F")


def test_an_open_abstention_expects_abstaining(imported):
    item = _qa(imported[2])["10_q_3"]
    assert (item.spec.kind, item.evidence, item.evidence_sessions) == ("abstain", [], [])


def test_a_yes_or_no_answer_is_judged_as_one(imported):
    assert _qa(imported[2])["0_q_5"].spec.model_dump(include={"kind", "value"}) == {
        "kind": "yes_no",
        "value": "yes",
    }


def test_a_question_without_a_uuid_belongs_to_the_user_whose_session_it_cites(imported):
    assert _qa(imported[2])["0_q_5"].persona_id == "0"


def test_questions_are_asked_just_after_their_users_last_session(imported):
    data = imported[2]
    ends = {p.id: p.end for p in data.personas}
    assert all(q.asked_at == ends[q.persona_id] for q in data.qa)
    assert ends["0"] == datetime(2025, 1, 4, 16, 4, 0)


def test_questions_are_counted_by_format(imported):
    assert imported[1]["qa_by_format"] == {"open": 7, "single_choice": 4}


# ------------------------------------------------------------------------------------------- evidence
def test_evidence_naming_an_image_is_the_message_that_shares_it(imported):
    qa = _qa(imported[2])
    assert qa["10_q_2"].evidence == ["10_0:t9"] and qa["0_q_3"].evidence == ["0_0:t11"]


def test_an_explanation_quoting_a_turn_word_for_word_is_that_turn(imported):
    item = _qa(imported[2])["0_q_0"]
    assert item.evidence == ["0_0:t6", "0_0:t8"]
    assert [q.text for q in item.proof.quotes] == [
        "不对，购车不是重点，这次主要是婚礼、差旅和理财。",
        "婚礼放在最前面，差旅和理财也都列了细项。",
    ]


def test_an_explanation_that_matches_a_turn_once_normalized_is_that_turn(imported):
    qa = _qa(imported[2])
    assert qa["10_q_1"].evidence == ["10_1:t3"] and qa["0_q_1"].evidence == ["0_0:t9"]
    assert qa["0_q_1"].proof.quotes[0].text is None  # not said word for word: nothing to check


def test_an_explanation_that_quotes_no_turn_leaves_its_session(imported):
    item = _qa(imported[2])["0_q_2"]
    assert (item.evidence, item.evidence_sessions) == ([], ["0_1"])


def test_evidence_naming_no_session_of_its_user_is_kept_as_written(imported):
    item = _qa(imported[2])["10_q_4"]
    assert item.evidence_sessions == ["10_1"]
    (kept,) = item.proof.args.unresolved_evidence
    assert json.loads(kept)["session_id"] == "10_5"


def test_each_way_evidence_resolved_is_counted(imported):
    notes = imported[1]["import"]
    counted = {k: notes.get(k, 0) for k in ("evidence_by_image", "evidence_by_quote", "evidence_by_prefix")}
    assert counted == {"evidence_by_image": 2, "evidence_by_quote": 4, "evidence_by_prefix": 2}
    assert (notes["evidence_session_level"], notes["evidence_unresolved"]) == (2, 1)


def test_an_imported_release_validates(imported):
    assert validate(imported[0]) == []


# --------------------------------------------------------------------------------------------- layouts
def _stages(root: Path) -> Path:
    """The pipeline's stage 5 and stage 6 files beside its image folder."""
    shutil.copytree(RELEASE / "stages", root)
    shutil.copytree(RELEASE / "image", root / "image")
    return root


def test_the_pipelines_stage_files_import_like_the_release(imported, tmp_path):
    stats = import_mobilemem_omni(_stages(tmp_path / "stages"), tmp_path / "out")
    data = Dataset.load(tmp_path / "out")
    release = imported[2]
    assert stats["layout"] == "stages" and validate(tmp_path / "out") == []
    assert {q.id: q.evidence for q in data.qa} == {q.id: q.evidence for q in release.qa}
    assert {r.id: r.sha256 for r in data.images} == {r.id: r.sha256 for r in release.images}


def test_an_image_under_the_pipelines_folder_name_is_found_under_the_releases(tmp_path):
    stats = import_mobilemem_omni(_stages(tmp_path / "stages"), tmp_path / "out")
    assert stats["import"]["images_found_by_folder_alias"] == 12


def test_a_user_written_to_two_stage_files_is_read_once(tmp_path):
    root = _stages(tmp_path / "stages")
    (root / "uuid_10").mkdir()
    line = (root / "stage5_sessions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (root / "uuid_10/stage5_sessions.jsonl").write_text(line + "\n", encoding="utf-8")
    stats = import_mobilemem_omni(root, tmp_path / "out")
    assert stats["personas"] == 2 and stats["import"]["users_repeated_in_files"] == 1


def test_the_explorers_wrapped_stage5_file_is_read(tmp_path):
    root = _stages(tmp_path / "stages")
    lines = (root / "stage5_sessions.jsonl").read_text(encoding="utf-8").splitlines()
    records = [{k: v for k, v in json.loads(line).items() if k != "uuid"} for line in lines]
    users = [{"user_id": uid, "records": [r]} for uid, r in zip((10, 0), records, strict=True)]
    (root / "stage5_sessions.jsonl").unlink()
    (root / "stage5_all_users.json").write_text(json.dumps({"summary": {}, "users": users}), encoding="utf-8")
    stats = import_mobilemem_omni(root, tmp_path / "out")
    assert stats["personas"] == 2 and stats["qa"] == 11


def test_the_release_inside_an_omni_folder_is_found(tmp_path):
    _release(tmp_path / "MobileMem/omni")
    stats = import_mobilemem_omni(tmp_path / "MobileMem", tmp_path / "out")
    assert (stats["layout"], stats["personas"], stats["images"]) == ("release", 2, 14)


def test_a_folder_without_release_or_stage_files_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(KemeError, match="no data.jsonl .* and no stage5_sessions"):
        import_mobilemem_omni(tmp_path / "empty", tmp_path / "out")


def test_keme_import_reports_the_release(tmp_path):
    done = CliRunner().invoke(
        app, ["import", "mobilemem-omni", str(_release(tmp_path / "r")), "--out", str(tmp_path / "o")]
    )
    said = " ".join(done.output.split())
    assert done.exit_code == 0, said
    assert "2 personas, 4 sessions, 48 messages, 11 QA items" in said and "evidence_by_quote 4" in said


def test_keme_import_of_an_empty_folder_fails_without_a_traceback(tmp_path):
    (tmp_path / "empty").mkdir()
    done = CliRunner().invoke(
        app, ["import", "mobilemem-omni", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]
    )
    said = " ".join(done.output.split())
    assert done.exit_code != 0 and "no data.jsonl" in said and "Traceback" not in said


# -------------------------------------------------------------------------------------------- helpers
@pytest.mark.parametrize(
    "path",
    [
        "image/uid0/camera_photos/0_event_0.png",
        "omni/image/uid0/camera_photos/0_event_0.png",
        "uid0\\camera_photos\\0_event_0.png",
        "[image:image/uid0/camera_photos/0_event_0.png]",
    ],
)
def test_an_image_path_is_keyed_from_its_user_folder(path):
    assert image_key(path) == "uid0/camera_photos/0_event_0.png"


def test_a_path_that_climbs_out_is_only_a_key():
    assert image_key("../../../etc/uid0/x.png") == "uid0/x.png"


def test_options_may_come_from_the_options_field():
    assert choices("Which one?", ["A. red", "B. blue"]) == ("Which one?", ["red", "blue"])


def test_a_prefix_found_in_two_turns_resolves_to_neither():
    texts = [
        ("s:t1", "We met at the old harbour cafe on Monday."),
        ("s:t2", "we met at the old harbour cafe again"),
    ]
    assert quoted_turn("we met at the old harbour cafe - twice", texts) is None


def test_a_short_explanation_is_never_matched_to_a_turn():
    assert quoted_turn("Yes.", [("s:t1", "Yes. I did.")]) is None


def test_a_country_comes_from_the_location_when_the_profile_names_none(tmp_path):
    root = _release(tmp_path / "r")
    users = [json.loads(line) for line in (root / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    del users[1]["Basic_Profile"]["nationality"]
    users[1]["Init_State"]["location"] = "日本, 东京"
    (root / "data.jsonl").write_text(
        "\n".join(json.dumps(u, ensure_ascii=False) for u in users), encoding="utf-8"
    )
    import_mobilemem_omni(root, tmp_path / "out")
    assert {p.id: p.country for p in Dataset.load(tmp_path / "out").personas}["0"] == "JP"

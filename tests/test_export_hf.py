"""`keme export hf`: a keme dataset as a Hugging Face dataset directory that `datasets` loads back exactly.

data/sample (en and zh, no screenshots) is exported once per module; a copy with one screenshot covers
the images table. Every load goes through the real `datasets` package, offline.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from eval.importers import hf
from eval.importers.hf import TABLES, export_hf
from keme.cli import app
from keme.dataset import Dataset
from keme.errors import KemeError
from keme.models import AnswerSpec, Claim, ImageRecord, Message, Persona, QAItem, Session
from tests.conftest import ROOT, sample_dataset

SAMPLE = ROOT / "data/sample"
PNG = b"\x89PNG\r\n\x1a\n a stand-in screenshot"
SHOT = "images/p01-img001.png"


@pytest.fixture(scope="module")
def load(tmp_path_factory) -> Iterator[Any]:
    """`datasets.load_dataset`, offline and with a cache of its own; returns the `test` split."""
    cache = tmp_path_factory.mktemp("hf-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        patch.setenv("HF_HUB_OFFLINE", "1")
        import datasets
        import huggingface_hub.constants

        patch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)

        def load_split(path: Path, name: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
            loaded = datasets.load_dataset(str(path), name, split="test", cache_dir=str(cache), **kwargs)
            return list(loaded)

        yield load_split


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "hf"
    export_hf(sample_dataset(), out)
    return out


@pytest.fixture(scope="module")
def with_image(tmp_path_factory) -> Path:
    """data/sample with one screenshot shared by p01's first user message, written as a keme dataset."""
    data = Dataset.load(SAMPLE)
    # a shared app record may stand alone (no user line): the first session the user speaks in
    first = next(s for s in data.sessions if any(m.role == "user" for m in s.messages))
    shares = next(m for m in first.messages if m.role == "user")
    image = ImageRecord(
        id="p01-img001",
        persona_id=first.persona_id,
        session_id=first.id,
        message_id=shares.id,
        path=SHOT,
        sha256=hashlib.sha256(PNG).hexdigest(),
        template="bill",
        language=first.language,
        caption="a bill",
        about={"merchant": "Spotify"},
        facts={"amount": "$21.49"},
        dom_text="Spotify $21.49",
        screen={"lines": [{"text": "Spotify"}]},
        width=390,
        height=844,
    )
    shared = shares.model_copy(update={"images": [SHOT], "captions": ["a bill"]})
    messages = [shared if m.id == shares.id else m for m in first.messages]
    data.sessions = [
        first.model_copy(update={"messages": messages}) if s.id == first.id else s for s in data.sessions
    ]
    data.images = [image]
    data.blobs[SHOT] = PNG
    root = tmp_path_factory.mktemp("with-image") / "data"
    data.write(root)
    return root


@pytest.fixture(scope="module")
def exported_with_image(with_image, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export-image") / "hf"
    export_hf(Dataset.load(with_image), out)
    return out


def _rows(load, exported: Path, table: str) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in load(exported, table)}


def _unjson(row: dict[str, Any], *fields: str) -> dict[str, Any]:
    return {**row, **{f: json.loads(row[f]) for f in fields}}


def _invoke(*args: str):
    return CliRunner().invoke(app, ["export", "hf", *args])


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- what survives


def test_every_question_comes_back_as_the_same_item(load, exported):
    rows = _rows(load, exported, "qa")
    items = {q.id: q for q in sample_dataset().qa}
    assert rows.keys() == items.keys()
    for qid, row in rows.items():
        rebuilt = QAItem.model_validate(_unjson(row, "proof", "queries", "also_supported_by"))
        assert rebuilt == items[qid]


def test_answers_and_evidence_ids_survive_exactly(load, exported):
    got = {r["id"]: (r["answer"], r["evidence"], r["evidence_sessions"]) for r in load(exported, "qa")}
    assert got == {q.id: (q.answer, q.evidence, q.evidence_sessions) for q in sample_dataset().qa}


def test_every_session_comes_back_with_its_messages_in_order(load, exported):
    messages = _rows(load, exported, "messages")
    sessions = {s.id: s for s in sample_dataset().sessions}
    for row in load(exported, "sessions"):
        turns = [messages[mid] for mid in row.pop("message_ids")]
        assert [t["position"] for t in turns] == list(range(len(turns)))
        assert {t["session_id"] for t in turns} <= {row["id"]}
        drop = ("session_id", "persona_id", "position")
        row["messages"] = [
            Message.model_validate({k: v for k, v in t.items() if k not in drop}) for t in turns
        ]
        assert Session.model_validate(row) == sessions[row["id"]]


def test_message_ids_are_those_of_the_dataset(load, exported):
    ids = {r["id"] for r in load(exported, "messages")}
    assert ids == {m.id for s in sample_dataset().sessions for m in s.messages}


def test_every_claim_comes_back_as_the_same_claim(load, exported):
    rows = _rows(load, exported, "claims")
    assert {cid: Claim.model_validate(row) for cid, row in rows.items()} == {
        c.id: c for c in sample_dataset().claims
    }


def test_every_persona_comes_back_with_its_attribute_versions(load, exported):
    rows = _rows(load, exported, "personas")
    assert {
        pid: Persona.model_validate(_unjson(r, "dimensions", "habits", "source")) for pid, r in rows.items()
    } == {p.id: p for p in sample_dataset().personas}


def test_a_screenshot_is_copied_and_its_record_comes_back(load, with_image, exported_with_image):
    (row,) = load(exported_with_image, "images")
    record = ImageRecord.model_validate(_unjson(row, "about", "facts", "screen"))
    assert record == Dataset.load(with_image).images[0]
    assert (exported_with_image / row["path"]).read_bytes() == PNG
    (shares,) = [m for m in load(exported_with_image, "messages") if m["images"]]
    assert (shares["id"], shares["images"]) == (row["message_id"], [SHOT])


def test_every_model_field_is_a_column():
    """A field added to a keme model must be exported (or this test says which, so it is decided)."""
    columns = {t.name: {c.name for c in t.columns} for t in TABLES}
    assert set(QAItem.model_fields) == columns["qa"]
    assert set(Session.model_fields) - {"messages"} | {"message_ids"} == columns["sessions"]
    assert set(Message.model_fields) | {"session_id", "persona_id", "position"} == columns["messages"]
    assert set(Claim.model_fields) == columns["claims"]
    assert set(ImageRecord.model_fields) == columns["images"]
    assert set(Persona.model_fields) == columns["personas"]
    assert [f.name for f in hf.SPEC] == list(AnswerSpec.model_fields)


# ---------------------------------------------------------------- how it loads


def test_data_dir_of_the_export_loads_the_questions(load, exported):
    rows = load("parquet", data_dir=str(exported))
    assert sorted(r["id"] for r in rows) == sorted(q.id for q in sample_dataset().qa)


def test_data_dir_of_a_table_folder_loads_that_table(load, exported_with_image):
    assert len(load("parquet", data_dir=str(exported_with_image / "sessions"))) == len(
        sample_dataset().sessions
    )
    assert [r["id"] for r in load("parquet", data_dir=str(exported_with_image / "image_records"))] == [
        "p01-img001"
    ]


def test_the_default_config_is_the_questions(load, exported):
    assert len(load(exported)) == len(sample_dataset().qa)


def test_a_table_without_rows_is_not_written(exported):
    header = yaml.safe_load((exported / "README.md").read_text().split("---")[1])
    assert "images" not in {c["config_name"] for c in header["configs"]}
    assert not (exported / "image_records").exists() and not (exported / "images").exists()


# ---------------------------------------------------------------- the card


def _header(exported: Path) -> dict[str, Any]:
    text = (exported / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("\n---\n")[0].removeprefix("---\n"))


@pytest.mark.parametrize(
    ("rows", "bucket"), [(999, "n<1K"), (1_000, "1K<n<10K"), (99_999, "10K<n<100K"), (10**6, "n>1M")]
)
def test_the_size_bucket_is_the_hubs(rows, bucket):
    from eval.importers.hf import size_category

    assert size_category(rows) == bucket


def test_card_header_has_what_the_hub_reads(exported):
    header = _header(exported)
    assert header["license"] == "apache-2.0"
    assert header["language"] == ["en", "zh"]
    assert header["task_categories"] == ["question-answering"]
    messages = sum(len(s.messages) for s in sample_dataset().sessions)
    assert header["size_categories"] == ["n<1K" if messages < 1000 else "1K<n<10K"]
    assert header["pretty_name"].startswith("sample")
    assert [c["config_name"] for c in header["configs"]] == [
        "qa",
        "sessions",
        "messages",
        "claims",
        "personas",
    ]
    assert [c.get("default", False) for c in header["configs"]] == [True, False, False, False, False]


def test_card_sizes_are_the_row_counts(exported):
    sample = sample_dataset()
    rows = {
        "qa": len(sample.qa),
        "sessions": len(sample.sessions),
        "messages": sum(len(s.messages) for s in sample.sessions),
        "claims": len(sample.claims),
        "personas": len(sample.personas),
    }
    sizes = {i["config_name"]: i["splits"][0]["num_examples"] for i in _header(exported)["dataset_info"]}
    assert sizes == rows == json.loads((exported / hf.MARKER).read_text())["tables"]


def test_card_sizes_are_checked_when_loading(load, exported, tmp_path):
    copy = tmp_path / "hf"
    copy.mkdir()
    for name, data in _tree(exported).items():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes(data)
    card = copy / "README.md"
    qa = len(sample_dataset().qa)
    card.write_text(card.read_text().replace(f"num_examples: {qa}\n", f"num_examples: {qa + 1}\n"))
    from datasets.exceptions import NonMatchingSplitsSizesError

    with pytest.raises(NonMatchingSplitsSizesError):
        load(copy, "qa")


def test_card_names_the_manifest_hash_and_ships_the_manifest(exported):
    manifest = (SAMPLE / "manifest.json").read_bytes()
    assert (exported / hf.SOURCE_MANIFEST).read_bytes() == manifest
    card = (exported / "README.md").read_text()
    assert hashlib.sha256(manifest).hexdigest() in card
    assert sample_dataset().content_sha256() in card


def test_card_documents_every_column_of_every_table(exported):
    card = (exported / "README.md").read_text()
    for table in TABLES[:4] + TABLES[5:]:
        section = card.split(f"### `{table.name}`")[1].split("###")[0]
        assert all(f"| `{c.name}` |" in section for c in table.columns), table.name
    assert "| `proof` | `string (JSON)` |" in card


# ---------------------------------------------------------------- determinism and writing


def test_the_same_dataset_gives_byte_identical_files(exported, tmp_path):
    again = tmp_path / "again"
    export_hf(Dataset.load(SAMPLE), again)
    assert _tree(again) == _tree(exported)


def test_a_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(hf, "atomic_write_bytes", broken)
    with pytest.raises(KemeError, match="No space left on device"):
        export_hf(sample_dataset(), tmp_path / "hf")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_replacement_keeps_the_earlier_export(exported, tmp_path, monkeypatch):
    out = tmp_path / "hf"
    export_hf(sample_dataset(), out)
    before = _tree(out)
    monkeypatch.setattr(hf, "_image_paths", lambda data: ["images/missing.png"])
    with pytest.raises(KemeError, match="missing"):
        export_hf(sample_dataset(), out, force=True)
    assert _tree(out) == before and [p.name for p in tmp_path.iterdir()] == ["hf"]


# ---------------------------------------------------------------- the command


def test_the_command_verifies_and_exports(tmp_path):
    result = _invoke(str(SAMPLE), "--out", str(tmp_path / "hf"))
    assert result.exit_code == 0, result.output
    data = sample_dataset()
    messages = sum(len(s.messages) for s in data.sessions)
    counts = (
        f"{len(data.qa)} qa, {len(data.sessions)} sessions, {messages} messages, {len(data.claims)} claims"
    )
    assert f"{counts}, 2 personas" in " ".join(result.output.split())
    assert (tmp_path / "hf/data/test-00000-of-00001.parquet").is_file()


def test_the_command_refuses_an_out_inside_the_dataset(with_image):
    result = _invoke(str(with_image), "--out", str(with_image / "hf"))
    assert result.exit_code == 2  # a KemeError, reported (an uncaught exception exits 1)
    assert "is inside the dataset" in result.output and "Traceback" not in result.output
    assert not (with_image / "hf").exists()


def test_the_command_refuses_a_non_empty_out_without_force(tmp_path):
    out = tmp_path / "hf"
    assert _invoke(str(SAMPLE), "--out", str(out)).exit_code == 0
    result = _invoke(str(SAMPLE), "--out", str(out))
    assert result.exit_code == 2
    assert "pass --force" in result.output and "Traceback" not in result.output


def test_force_replaces_an_earlier_export(tmp_path):
    out = tmp_path / "hf"
    assert _invoke(str(SAMPLE), "--out", str(out)).exit_code == 0
    (out / "stale.txt").write_text("left from before")
    result = _invoke(str(SAMPLE), "--out", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert not (out / "stale.txt").exists() and (out / "README.md").is_file()


def test_force_never_replaces_a_directory_that_is_not_an_export(tmp_path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    result = _invoke(str(SAMPLE), "--out", str(out), "--force")
    assert result.exit_code == 2 and "holds no keme export" in result.output
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


def test_the_command_refuses_an_out_that_contains_the_dataset(with_image):
    result = _invoke(str(with_image), "--out", str(with_image.parent), "--force")
    assert result.exit_code == 2 and "contains the dataset" in result.output
    assert (with_image / "manifest.json").is_file()


def test_the_command_refuses_a_tampered_dataset_unless_no_verify(with_image, tmp_path):
    tampered = tmp_path / "data"
    shutil.copytree(with_image, tampered)
    (tampered / SHOT).write_bytes(PNG + b"edited")
    refused = _invoke(str(tampered), "--out", str(tmp_path / "a"))
    assert refused.exit_code == 2 and "--no-verify" in refused.output
    assert not (tmp_path / "a").exists()
    assert _invoke(str(tampered), "--out", str(tmp_path / "b"), "--no-verify").exit_code == 0
    assert (tmp_path / "b" / SHOT).read_bytes() == PNG + b"edited"

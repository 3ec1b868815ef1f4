"""The render stage: screenshots attach to sessions as visual memory points, with verified visual
questions."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from keme.cli import synthesize_dataset
from keme.dataset import Dataset
from keme.dataset.manifest import read_manifest
from keme.models.image import SCREEN_TEMPLATES
from keme.synth.limits import load_config
from keme.validate import validate

pytestmark = pytest.mark.chromium
CONFIG = Path(__file__).parent / "fixtures" / "omni-small.yaml"


@pytest.fixture(scope="module")
def omni(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("omni") / "data"
    synthesize_dataset(load_config(CONFIG), out)
    return out


@pytest.fixture()
def copy(omni, tmp_path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(omni, target)
    return target


def test_every_template_is_rendered_in_both_languages(omni):
    shown = {(r.template, r.language) for r in Dataset.load(omni).images}
    assert shown == {(t, lang) for t in SCREEN_TEMPLATES for lang in ("en", "zh")}


def test_each_screenshot_is_a_user_message_between_its_neighbours(omni):
    data = Dataset.load(omni)
    by_message = {r.message_id: r for r in data.images}
    for session in data.sessions:
        for before, message, after in zip(session.messages, session.messages[1:], session.messages[2:]):
            if message.id in by_message:
                record = by_message[message.id]
                assert message.role == "user"
                assert message.images == [record.path] and message.captions == [record.caption]
                assert before.timestamp < message.timestamp < after.timestamp


def test_the_manifest_counts_the_screenshots_messages_too(omni):
    data = Dataset.load(omni)
    messages = [m for s in data.sessions for m in s.messages]
    stats = read_manifest(omni).stats
    assert stats["messages"] == len(messages) and any(m.images for m in messages)
    assert stats["messages_by_role"] == dict(Counter(m.role for m in messages))


def test_manifest_holds_the_hash_of_every_png(omni):
    manifest = read_manifest(omni)
    for record in Dataset.load(omni).images:
        png = (omni / record.path).read_bytes()
        assert manifest.files[record.path].sha256 == record.sha256 == hashlib.sha256(png).hexdigest()


def test_the_dataset_validates_including_a_fresh_render(omni):
    assert validate(omni, rerender=True) == []


def test_visual_questions_are_part_of_the_mix(omni):
    items = [q for q in Dataset.load(omni).qa if q.type == "visual_reasoning"]
    kinds = Counter(q.proof.op for q in items)
    assert kinds["image_fact"] > 0 and kinds["image_count"] + kinds["image_sum"] > 0


def test_visual_detail_answers_appear_in_no_text_message(omni):
    data = Dataset.load(omni)
    texts = [m.content for s in data.sessions for m in s.messages]
    details = [q for q in data.qa if q.proof.op == "image_fact" and q.spec.kind == "entity"]
    assert details
    for item in details:
        assert not any(item.spec.value in text for text in texts), item.question


def test_visual_gold_is_the_text_read_back_from_the_page(omni):
    data = Dataset.load(omni)
    records = {r.id: r for r in data.images}
    for item in data.qa:
        if item.proof.op == "image_fact" and item.spec.kind == "entity":
            record = records[item.proof.args.image]
            assert item.spec.value in record.facts[item.proof.args.fact]
            assert item.spec.value in record.dom_text


def test_captions_name_the_screen_but_not_its_details(omni):
    data = Dataset.load(omni)
    for record in data.images:
        assert record.caption
        for name in ("transaction_id", "seat", "order_id", "booking_ref"):
            if name in record.facts:
                assert record.facts[name] not in record.caption


def test_a_changed_png_is_a_violation(copy):
    record = Dataset.load(copy).images[0]
    (copy / record.path).write_bytes((copy / record.path).read_bytes() + b"\0")
    assert any(v.check == "image" and "SHA-256" in v.message for v in validate(copy))


def test_a_missing_png_is_a_violation(copy):
    record = Dataset.load(copy).images[0]
    (copy / record.path).unlink()
    assert any(v.check == "image" and "missing" in v.message for v in validate(copy))


def test_a_visual_fact_missing_from_its_page_is_a_violation(copy):
    data = Dataset.load(copy)
    item = next(q for q in data.qa if q.proof.op == "image_fact" and q.proof.args.fact)
    lines = (copy / "images.jsonl").read_text(encoding="utf-8").splitlines()
    patched = []
    for line in lines:
        record = json.loads(line)
        if record["id"] == item.proof.args.image:
            record["dom_text"] = record["dom_text"].replace(record["facts"][item.proof.args.fact], "")
        patched.append(json.dumps(record, ensure_ascii=False))
    (copy / "images.jsonl").write_text("\n".join(patched) + "\n", encoding="utf-8")
    messages = [str(v) for v in validate(copy)]
    assert any(item.id in m and "not on the rendered page" in m for m in messages)


def test_same_config_and_seed_give_byte_identical_images(omni, tmp_path):
    again = tmp_path / "again"
    synthesize_dataset(load_config(CONFIG), again)
    for name in ("sessions.jsonl", "images.jsonl", "qa.jsonl", "manifest.json"):
        assert (again / name).read_bytes() == (omni / name).read_bytes(), name


def test_rerendering_a_dataset_replaces_its_screenshots(copy):
    from keme.omni.stage import render_stage

    before = Dataset.load(copy)
    cfg = load_config(CONFIG)
    data = Dataset.load(copy)
    render_stage(data, cfg.omni.model_copy(update={"per_month": 1, "templates": ["bill"]}), cfg.seed)
    data.write()
    after = Dataset.load(copy)
    assert {r.template for r in after.images} == {"bill"}
    assert sum(len(m.images) for s in after.sessions for m in s.messages) == len(after.images)
    assert len(list((copy / "images").glob("*.png"))) == len(after.images) < len(before.images)


def test_text_systems_see_screenshots_through_their_captions(omni):
    from eval.replay import replay_of

    def shared(mode: str) -> list[str]:
        replay = replay_of(Dataset.load(omni), images=mode)
        return [m.content for p in replay.plans for s in p.sessions for m in s.messages if m.images]

    assert all("[image: " in text for text in shared("caption"))
    assert not any("[image: " in text for text in shared("none"))


def test_the_demo_dataset_shows_every_template_in_both_languages(tmp_path):
    out = tmp_path / "demo"
    synthesize_dataset(load_config(Path(__file__).parents[1] / "configs" / "demo.yaml"), out)
    shown = {(r.template, r.language) for r in Dataset.load(out).images}
    assert shown == {(t, lang) for t in SCREEN_TEMPLATES for lang in ("en", "zh")}


def test_face_checks_without_insightface_say_why_they_were_skipped(monkeypatch, tmp_path):
    import sys

    from keme.omni.stage import face_check

    monkeypatch.setitem(sys.modules, "insightface", None)
    monkeypatch.setitem(sys.modules, "insightface.app", None)
    assert face_check([], {}) == "skipped: insightface is not installed (pip install -e '.[faces]')"


def test_an_unknown_template_in_the_config_is_an_error_naming_it():
    from keme.errors import KemeError
    from keme.synth.limits import parse_config

    with pytest.raises(KemeError, match="unknown templates \\['fax_machine'\\]"):
        parse_config(
            "name: x\npersonas:\n  - {language: en, start: 2026-01-01, months: 1}\n"
            "omni:\n  templates: [bill, fax_machine]\n"
        )


def test_rerendering_checks_pngs_made_at_a_higher_pixel_ratio(tmp_path):
    from keme.synth.limits import parse_config

    cfg = parse_config(
        "name: hi-dpi\nseed: 1\npersonas:\n  - {language: zh, start: 2026-01-01, months: 1}\n"
        "omni: {enabled: true, per_month: 2, scale: 2, templates: [bill, note]}\n"
    )
    synthesize_dataset(cfg, tmp_path / "data")
    assert validate(tmp_path / "data", rerender=True) == []

"""Configs are validated with errors that name file, line, key and what is expected."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from keme.errors import KemeError
from keme.synth.limits import load_config, parse_config

ROOT = Path(__file__).resolve().parents[1]
VALID = """\
name: t
personas:
  - language: en
    start: 2026-01-01
    months: 2
"""


def test_shipped_configs_load():
    assert load_config(ROOT / "configs/demo.yaml").personas[1].language == "zh"
    assert load_config(ROOT / "configs/year.yaml").personas[0].months == 12


def test_unknown_key_names_file_line_and_key():
    text = VALID + "    colour: red\n"
    with pytest.raises(KemeError) as info:
        parse_config(text, "my.yaml")
    assert "my.yaml:6: personas.0.colour: unknown key" in str(info.value)


def test_wrong_type_says_what_is_expected():
    with pytest.raises(KemeError) as info:
        parse_config(VALID.replace("months: 2", "months: three"), "my.yaml")
    message = str(info.value)
    assert "my.yaml:5: personas.0.months" in message
    assert "valid integer" in message and "'three'" in message


def test_missing_required_key():
    with pytest.raises(KemeError, match="name: required key is missing"):
        parse_config(VALID.replace("name: t\n", ""), "my.yaml")


def test_unknown_change_is_rejected():
    with pytest.raises(KemeError, match="unknown changes"):
        parse_config(VALID + "changes:\n  allowed: [win_lottery]\n", "my.yaml")


def test_missing_file_is_reported(tmp_path):
    with pytest.raises(KemeError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_fingerprint_ignores_seed_but_not_content():
    a = parse_config(VALID)
    assert a.fingerprint() == parse_config(VALID + "seed: 99\n").fingerprint()
    assert a.fingerprint() != parse_config(VALID.replace("months: 2", "months: 3")).fingerprint()


def test_the_limits_are_stated_in_the_schema(tmp_path):
    from keme.schema import export_schemas

    export_schemas(tmp_path)
    schema = json.loads((tmp_path / "config.schema.json").read_text())
    defs = schema["$defs"]
    assert schema["properties"]["personas"]["maxItems"] == 99
    assert defs["PersonaSpec"]["properties"]["months"]["maximum"] == 24
    assert defs["GraphSpec"]["properties"]["max_events"]["minimum"] == 8
    assert "at most 30 in all" in defs["AnchorSpec"]["properties"]["per_month"]["description"]
    assert "ground the anchors" in schema["description"]


def test_a_date_is_parsed_by_the_model_not_by_yaml():
    assert parse_config(VALID).personas[0].start == date(2026, 1, 1)
    with pytest.raises(
        KemeError, match=r"my\.yaml:4: personas\.0\.start: '2026-02-30' is not a calendar date"
    ):
        parse_config(VALID.replace("2026-01-01", "2026-02-30"), "my.yaml")


def test_a_duplicate_key_names_both_lines():
    with pytest.raises(
        KemeError, match=r"my\.yaml:6:1: not valid YAML: duplicate key 'name' \(first given on line 1\)"
    ):
        parse_config(VALID + "name: again\n", "my.yaml")


def test_a_yaml_merge_key_is_not_a_duplicate():
    text = (
        "name: t\npersonas:\n  - &p {language: en, start: 2026-01-01, months: 2}\n"
        "  - {<<: *p, language: zh}\n"
    )
    assert [p.language for p in parse_config(text).personas] == ["en", "zh"]


def test_values_are_not_coerced():
    with pytest.raises(KemeError, match=r"seed: .*valid integer.*quoted value is text"):
        parse_config(VALID + "seed: '7'\n", "my.yaml")


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(VALID.encode() + b"# na\xefve\n")
    with pytest.raises(KemeError, match=r"c\.yaml:6: not valid UTF-8 \(byte 0xef"):
        load_config(path)


def test_a_utf8_byte_order_mark_is_fine(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + VALID.encode())
    assert load_config(path).name == "t"


def test_a_chapter_that_cannot_ground_its_anchors_is_refused_at_load():
    text = (
        "name: t\nseed: 1\npersonas:\n  - {language: en, start: 2026-01-01, months: 24}\n"
        "graph:\n  max_depth: 1\n"
    )
    with pytest.raises(KemeError) as info:
        parse_config(text, "my.yaml")
    message = str(info.value)
    assert "my.yaml:4: personas.0: with seed 1 the chapter" in message
    assert "a chapter has at most graph.max_events (15) sessions" in message
    assert "one-month chapters need graph.max_events of at least 24" in message


def test_the_limit_depends_on_the_seed_only_when_the_worst_case_does_not_fit():
    # one month at depth 1: up to 16 anchors in 31 days for any seed, a chapter of 15 holds what most seeds
    # draw
    text = "name: t\npersonas:\n  - {language: en, start: 2026-05-01, months: 1}\ngraph:\n  max_depth: 1\n"
    accepted = [seed for seed in range(6) if _accepts(text, seed)]
    assert accepted  # the worst case alone would refuse every seed
    assert parse_config(text, seed=accepted[0]).seed == accepted[0]


def _accepts(text: str, seed: int) -> bool:
    try:
        parse_config(text, seed=seed)
    except KemeError:
        return False
    return True


def test_a_seed_override_is_checked():
    with pytest.raises(KemeError, match=r"--seed must be between 0 and 2\^63-1"):
        parse_config(VALID, seed=-1)


def test_a_tampered_manifest_config_is_named():
    from keme.config import config_from_manifest

    good = parse_config(VALID).model_dump(mode="json")
    assert config_from_manifest(good, "d/manifest.json") == parse_config(VALID)
    with pytest.raises(KemeError, match=r"d/manifest\.json: the manifest's config is not valid \(personas: "):
        config_from_manifest(good | {"personas": "x"}, "d/manifest.json")
    with pytest.raises(KemeError, match="has no synthesis config"):
        config_from_manifest(None, "d/manifest.json")

"""Configs are validated with errors that name file, line, key and what is expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from keme.config import load_config, parse_config
from keme.errors import KemeError

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
    with pytest.raises(KemeError, match="cannot read config"):
        load_config(tmp_path / "nope.yaml")


def test_fingerprint_ignores_seed_but_not_content():
    a = parse_config(VALID)
    assert a.fingerprint() == parse_config(VALID + "seed: 99\n").fingerprint()
    assert a.fingerprint() != parse_config(VALID.replace("months: 2", "months: 3")).fingerprint()

from __future__ import annotations

from pathlib import Path

import pytest

from keme.config import SynthConfig, load_config, parse_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def sample_config() -> SynthConfig:
    return load_config(ROOT / "configs/sample.yaml")


def small_config(text: str = "") -> SynthConfig:
    """One English persona over two months unless `text` adds or overrides keys."""
    base = "name: small\nseed: 5\npersonas:\n  - {language: en, start: 2026-05-01, months: 2}\n"
    return parse_config(base + text, "<test>")

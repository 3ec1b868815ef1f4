from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from keme.config import SynthConfig
from keme.synth.limits import load_config, parse_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def sample_config() -> SynthConfig:
    return load_config(ROOT / "configs/sample.yaml")


@pytest.fixture
def temporary_system():
    """Register test systems by name for one test: `temporary_system(name, factory)` returns the name."""
    from eval.registry import REGISTRY, SystemSpec

    added: list[str] = []

    def register(name: str, factory) -> str:
        REGISTRY[name] = SystemSpec(name, factory, "test system")
        added.append(name)
        return name

    yield register
    for name in added:
        REGISTRY.pop(name, None)


@cache
def sample_dataset():
    """data/sample loaded and checked once, the way `keme eval` hands a dataset to a run (never mutated)."""
    from keme.validate import verified_dataset

    return verified_dataset(ROOT / "data/sample")


@dataclass(frozen=True)
class PhoneUpdate:
    """The shipped sample's "What phone do I have now?": its id, its gold messages (the phone before the
    update, then the update) and the two phones. Derived, so a regenerated sample moves no test."""

    question: str
    old_message: str
    new_message: str
    old: str
    new: str
    noise: list[str]  # three early user messages of the persona that mention neither phone


@cache
def sample_phone_update() -> PhoneUpdate:
    data = sample_dataset()
    item = next(
        q
        for q in data.qa
        if q.subtype == "knowledge_update.current" and q.question.endswith("phone do I have now?")
    )
    messages = {m.id: m for s in data.sessions for m in s.messages}
    old_id, new_id = sorted(item.evidence, key=lambda i: messages[i].timestamp)
    persona = item.id.split("-")[0]
    old = next(c.value for c in data.claims if c.message_id == old_id and c.value != item.answer)
    noise = [
        m.id
        for m in sorted(messages.values(), key=lambda m: m.timestamp)
        if m.id.startswith(persona)
        and m.role == "user"
        and m.id not in item.evidence
        and old not in m.content
        and item.answer not in m.content
    ][3:6]
    return PhoneUpdate(item.id, old_id, new_id, old, item.answer, noise)


def small_config(text: str = "") -> SynthConfig:
    """One English persona over two months unless `text` adds or overrides keys."""
    base = "name: small\nseed: 5\npersonas:\n  - {language: en, start: 2026-05-01, months: 2}\n"
    return parse_config(base + text, "<test>")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The fault suite's counts (tests/faults/probe.py), when any probe ran."""
    import json
    import os
    import sys

    probe = sys.modules.get("probe")
    if probe is None or not getattr(probe, "OUTCOMES", None):
        return
    tally = probe.counts()
    terminalreporter.write_sep("-", "fault suite")
    terminalreporter.write_line(", ".join(f"{k} {v}" for k, v in tally.items()))
    bad = [
        (name, outcome)
        for name, outcome in probe.OUTCOMES
        if outcome in ("crash", "silent", "hang", "escape")
    ]
    for name, outcome in bad:
        terminalreporter.write_line(f"  {outcome}: {name}")
    if os.environ.get("KEME_FAULT_REPORT"):
        with open(os.environ["KEME_FAULT_REPORT"], "w", encoding="utf-8") as handle:
            json.dump({"counts": tally, "probes": probe.OUTCOMES}, handle, indent=1)

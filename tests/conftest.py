from __future__ import annotations

import json
import os
import sys
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


# the fault probes' outcomes, as the reports carry them: under pytest-xdist the probes run in workers, so
# the counts are taken from each test's report (its user_properties), never from this process's memory
FAULT_PROBES: list[tuple[str, str]] = []
_PROBES_BEFORE = pytest.StashKey[int]()


def pytest_runtest_setup(item):
    probe = sys.modules.get("probe")
    item.stash[_PROBES_BEFORE] = len(probe.OUTCOMES) if probe is not None else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The probes this test ran ride on its teardown report (from a worker to the controller)."""
    outcome = yield
    probe = sys.modules.get("probe")
    if call.when == "teardown" and probe is not None:
        ran = probe.OUTCOMES[item.stash.get(_PROBES_BEFORE, 0) :]
        if ran:
            outcome.get_result().user_properties.append(("fault_probes", [list(p) for p in ran]))


def pytest_runtest_logreport(report):
    for key, value in report.user_properties:
        if key == "fault_probes":
            FAULT_PROBES.extend((name, outcome) for name, outcome in value)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The fault suite's counts (tests/faults/probe.py), when any probe ran."""
    if not FAULT_PROBES:
        return
    tally = {"tried": len(FAULT_PROBES), "clear": 0, "ok": 0, "crash": 0, "silent": 0, "hang": 0, "escape": 0}
    for _, outcome in FAULT_PROBES:
        tally[outcome] += 1
    terminalreporter.write_sep("-", "fault suite")
    terminalreporter.write_line(", ".join(f"{k} {v}" for k, v in tally.items()))
    for name, outcome in FAULT_PROBES:
        if outcome in ("crash", "silent", "hang", "escape"):
            terminalreporter.write_line(f"  {outcome}: {name}")
    if os.environ.get("KEME_FAULT_REPORT"):
        with open(os.environ["KEME_FAULT_REPORT"], "w", encoding="utf-8") as handle:
            json.dump({"counts": tally, "probes": FAULT_PROBES}, handle, indent=1)

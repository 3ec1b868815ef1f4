"""One Dataset, written once per command: each file once, the manifest last, a kill leaves the old or the new.

Writes are counted at the rename every atomic write ends with (`os.replace`): a file put into a
dataset directory is renamed into place exactly once, wherever in the code the write comes from.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from keme.cli import app
from keme.dataset import Dataset
from keme.dataset.commit import PLAN, STAGE
from keme.dataset.manifest import MANIFEST
from keme.validate import validate

OMNI = (
    "name: tiny-omni\nseed: 5\npersonas:\n  - {language: en, start: 2026-05-01, months: 1}\n"
    "omni:\n  enabled: true\n  per_month: 18\n"
)
PLAIN = "name: tiny\nseed: 6\npersonas:\n  - {language: en, start: 2026-05-01, months: 1}\n"


class Renames:
    """Every `os.replace` into `root`, by path relative to it (the staged copies under .keme-stage
    included)."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch):
        self.root = root.resolve()
        self.into: Counter[str] = Counter()
        original = os.replace

        def replace(src, dst, *args, **kwargs):
            target = Path(dst).resolve()
            if target.is_relative_to(self.root):
                self.into[target.relative_to(self.root).as_posix()] += 1
            return original(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "replace", replace)

    def placed(self) -> Counter[str]:
        """Renames into the dataset itself (not its stage, checkpoints or lock)."""
        return Counter({name: n for name, n in self.into.items() if not name.startswith(".")})

    def staged(self) -> Counter[str]:
        prefix = f"{STAGE}/"
        return Counter(
            {
                name.removeprefix(prefix): n
                for name, n in self.into.items()
                if name.startswith(prefix) and name != f"{prefix}{PLAN}"
            }
        )


def keme(*args: str) -> None:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def listing(root: Path) -> dict[str, str]:
    """Every file of the dataset proper (hidden entries aside) with its SHA-256."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


@pytest.fixture(scope="module")
def omni(tmp_path_factory) -> Path:
    """A small dataset with screenshots, made by `keme synth`."""
    base = tmp_path_factory.mktemp("omni")
    (base / "omni.yaml").write_text(OMNI)
    keme("synth", "--config", str(base / "omni.yaml"), "--out", str(base / "d"))
    return base / "d"


def test_synth_writes_the_manifest_once_and_each_data_file_once(tmp_path, monkeypatch):
    config = tmp_path / "omni.yaml"
    config.write_text(OMNI)
    out = tmp_path / "d"
    renames = Renames(out, monkeypatch)
    keme("synth", "--config", str(config), "--out", str(out))
    listed = set(Dataset.load(out).manifest.files)
    assert {"personas.jsonl", "sessions.jsonl", "qa.jsonl", "images.jsonl"} <= listed
    assert any(name.startswith("images/") for name in listed)
    assert renames.placed() == Counter({name: 1 for name in [*listed, MANIFEST]})
    assert renames.staged() == renames.placed()  # each staged once, then moved into place once
    assert not (out / STAGE).exists()


def test_qa_writes_only_what_changed_and_nothing_when_nothing_did(omni, tmp_path, monkeypatch):
    data = tmp_path / "d"
    shutil.copytree(omni, data)
    before = listing(data)
    renames = Renames(data, monkeypatch)
    keme("qa", str(data))
    assert renames.into == Counter() and listing(data) == before  # the same questions: not one write
    lines = (data / "qa.jsonl").read_text().splitlines(keepends=True)
    (data / "qa.jsonl").write_text("".join(lines[:-1]))  # a question lost: `keme qa` rebuilds qa.jsonl alone
    keme("qa", str(data))
    assert renames.placed() == Counter({"qa.jsonl": 1}) and listing(data) == before


def test_render_writes_each_changed_file_once(omni, tmp_path, monkeypatch):
    data = tmp_path / "d"
    shutil.copytree(omni, data)
    before = listing(data)
    renames = Renames(data, monkeypatch)
    keme("render", str(data), "--per-month", "1")
    after = listing(data)
    placed = renames.placed()
    assert placed and set(placed.values()) == {1}
    assert set(placed) == {name for name in after if after[name] != before.get(name)}
    assert MANIFEST in placed and not {"personas.jsonl", "anchors.jsonl", "graphs.jsonl"} & set(placed)
    assert validate(data) == []
    gone = {name for name in before if name not in after}
    assert gone and all(name.startswith("images/") for name in gone)


def test_eval_parses_the_dataset_once(tmp_path, monkeypatch):
    import keme.dataset.dataset as module

    parsed: Counter[str] = Counter()
    original = module.scan_records

    def counting(path, data, model):
        parsed[Path(path).name] += 1
        return original(path, data, model)

    monkeypatch.setattr(module, "scan_records", counting)
    loads = Counter()
    monkeypatch.setattr(
        Dataset,
        "scan",
        classmethod(
            lambda cls, root, skip=frozenset(), _s=Dataset.scan.__func__: (
                loads.update(["scan"]) or _s(cls, root, skip)
            )
        ),
    )
    keme(
        "eval",
        "--data",
        str(ROOT / "data/sample"),
        "--systems",
        "recency",
        "--out",
        str(tmp_path / "run"),
        "--limit",
        "2",
    )
    assert loads == Counter(scan=1)
    assert parsed and set(parsed.values()) == {1}, parsed


# ---------------------------------------------------------------- a kill at every step of the write
def _synth(out: Path, config: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    environment = os.environ | {"PYTHONPATH": str(ROOT)} | env
    return subprocess.run(
        [sys.executable, "-m", "keme.cli", "synth", "--config", str(config), "--out", str(out), "--force"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=False,
    )


def test_a_kill_at_every_step_of_the_write_leaves_the_old_or_the_new_dataset(omni, tmp_path):
    """Over a dataset with screenshots, a --force synth of one without: files staged, moved, removed,
    manifest."""
    config = tmp_path / "plain.yaml"
    config.write_text(PLAIN)
    old = listing(omni)
    new_dir = tmp_path / "new"
    assert _synth(new_dir, config, {}).returncode == 0
    new = listing(new_dir)
    assert old.keys() != new.keys()
    # each step must leave one of these two valid datasets, byte for byte
    assert validate(omni) == [] and validate(new_dir) == []
    seen = []
    for step in range(1, 60):
        out = tmp_path / f"k{step}"
        shutil.copytree(omni, out)
        done = _synth(out, config, {"KEME_FAULT_AFTER_WRITES": str(step)})
        if done.returncode == 0:  # no step left to kill at: the write finished
            assert listing(out) == new
            break
        assert done.returncode == -9, done.stderr[-2000:]
        Dataset.load(out, verify=True)  # a reader first finishes or discards the interrupted write
        found = listing(out)
        assert found in (old, new), f"a kill at step {step} left neither dataset"
        assert not (out / STAGE).exists()
        seen.append("new" if found == new else "old")
        shutil.rmtree(out)
    else:
        pytest.fail("the write never finished")
    assert "old" in seen and "new" in seen and seen == sorted(seen, key=lambda s: s == "new")

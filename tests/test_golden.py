"""The demo (seed 7, with screenshots) and the year dataset are byte-for-byte what they were.

A refactoring must not change one byte of what `keme synth` writes. When a change is meant to alter the
data, run `tests/golden/update.sh` and commit the new digests with it, so the review sees both.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

GOLDEN = ROOT / "tests/golden"


def _expected(name: str) -> dict[str, str]:
    lines = (GOLDEN / f"{name}.sha256").read_text(encoding="utf-8").splitlines()
    return {path: digest for digest, path in (line.split(maxsplit=1) for line in lines)}


def _actual(directory: Path) -> dict[str, str]:
    return {
        path.relative_to(directory).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("name", ["demo", "year"])
def test_synthesized_dataset_matches_its_golden_digests(tmp_path, name):
    out = tmp_path / name
    subprocess.run(
        [sys.executable, "-m", "keme.cli", "synth", "--config", f"configs/{name}.yaml", "--out", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    expected, actual = _expected(name), _actual(out)
    changed = sorted(
        path for path in expected.keys() | actual.keys() if expected.get(path) != actual.get(path)
    )
    assert changed == [], f"{name}: these files differ from tests/golden/{name}.sha256"

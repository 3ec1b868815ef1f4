"""A dataset that passed the check is not checked again until a byte of it, or of the checks, changes."""

from __future__ import annotations

import shutil

import pytest

from keme import validate
from keme.dataset import DatasetError, Violation, checked
from keme.validate import verified_dataset


@pytest.fixture
def sample(tmp_path, root, monkeypatch):
    """A copy of the sample, a private stamp cache, and a count of the checks made (each passes)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KEME_CHECK_CACHE", raising=False)
    data = tmp_path / "data"
    shutil.copytree(root / "data/sample", data)
    calls: list[int] = []

    def counted(scan, questions=True):
        calls.append(1)
        return []

    monkeypatch.setattr(validate, "check_dataset", counted)
    return data, calls


def test_an_unchanged_dataset_is_checked_once(sample):
    data, calls = sample
    verified_dataset(data)
    verified_dataset(data)
    assert len(calls) == 1


def test_a_changed_file_is_checked_again(sample):
    data, calls = sample
    verified_dataset(data)
    with (data / "qa.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    verified_dataset(data)
    assert len(calls) == 2


def test_an_added_symlink_is_checked_again(sample):
    data, calls = sample
    verified_dataset(data)
    (data / "extra").symlink_to("/etc/hostname")
    verified_dataset(data)
    assert len(calls) == 2


def test_a_dataset_that_failed_is_never_stamped(sample, monkeypatch):
    data, calls = sample

    def failing(scan, questions=True):
        calls.append(1)
        return [Violation("hash", "p01", "sessions.jsonl: hash differs")]

    monkeypatch.setattr(validate, "check_dataset", failing)
    for _ in range(2):
        with pytest.raises(DatasetError):
            verified_dataset(data)
    assert len(calls) == 2


def test_other_checking_code_misses_the_stamp(sample, monkeypatch):
    data, calls = sample
    verified_dataset(data)
    monkeypatch.setattr(checked, "code_digest", lambda: "another version of the checks")
    verified_dataset(data)
    assert len(calls) == 2


def test_stamps_can_be_turned_off(sample, monkeypatch):
    data, calls = sample
    monkeypatch.setenv("KEME_CHECK_CACHE", "0")
    verified_dataset(data)
    verified_dataset(data)
    assert len(calls) == 2


def test_an_unwritable_cache_only_costs_the_check(sample, monkeypatch, tmp_path):
    data, calls = sample
    (tmp_path / "blocked").write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "blocked"))
    verified_dataset(data)
    verified_dataset(data)
    assert len(calls) == 2

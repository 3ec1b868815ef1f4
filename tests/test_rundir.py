"""A run directory: what a run may delete (--force) is only what it marked as its own."""

from __future__ import annotations

import pytest

from eval.rundir import OWNED, check_fingerprint, clear, open_run
from keme.errors import KemeError

IDENTITY = {"dataset_sha256": "a" * 64, "k": 10}


def test_a_system_directory_the_run_made_carries_its_mark(tmp_path):
    state = open_run(tmp_path, IDENTITY, force=False)
    check_fingerprint(tmp_path, state, "bm25", "f1", force=False)
    assert (tmp_path / "bm25" / OWNED).is_file()


def test_force_deletes_the_marked_system_directory_and_keeps_a_users_folder_named_like_one(tmp_path):
    state = open_run(tmp_path, IDENTITY, force=False)
    check_fingerprint(tmp_path, state, "bm25", "f1", force=False)
    (tmp_path / "bm25" / "retrieve.jsonl").write_text("{}\n")
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "state").write_text("the user's own")
    clear(tmp_path)
    assert not (tmp_path / "bm25").exists()
    assert (tmp_path / "archive" / "state").read_text() == "the user's own"


def test_an_unmarked_folder_at_a_systems_name_is_refused_not_used(tmp_path):
    state = open_run(tmp_path, IDENTITY, force=False)
    (tmp_path / "bm25").mkdir()
    (tmp_path / "bm25" / "retrieve.jsonl").write_text('{"question_id": "q1"}\n')
    with pytest.raises(KemeError, match="no keme run marked as its own"):
        check_fingerprint(tmp_path, state, "bm25", "f1", force=True)
    assert (tmp_path / "bm25" / "retrieve.jsonl").exists()


def test_a_changed_system_is_redone_in_a_fresh_marked_directory_with_force(tmp_path):
    state = open_run(tmp_path, IDENTITY, force=False)
    check_fingerprint(tmp_path, state, "bm25", "f1", force=False)
    (tmp_path / "bm25" / "retrieve.jsonl").write_text("{}\n")
    check_fingerprint(tmp_path, state, "bm25", "f2", force=True)
    assert sorted(p.name for p in (tmp_path / "bm25").iterdir()) == [OWNED]

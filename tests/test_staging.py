"""A command deletes only what it made: staging beside an output, swapping it in, and the locks that keep two
runs out of one target (keme.dataset.staging, keme.dataset.lock)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, sample_dataset, small_config

from eval.view.site import write_site
from keme.dataset.commit import STAGE, recover
from keme.dataset.lock import LOCK_FILE, DirectoryLocked, directory_lock, target_lock
from keme.dataset.staging import MARK, Made
from keme.errors import KemeError
from keme.synth.pipeline import WORK, prepare_output, remove_work

HOLD = """
import sys
from pathlib import Path
from keme.dataset.lock import target_lock
with target_lock(Path(sys.argv[1]), "holder"):
    print("held", flush=True)
    sys.stdin.read()
"""


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its bytes (None for a directory)."""
    return {
        str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))
    }


def _decoys(parent: Path, name: str) -> dict[str, bytes | None]:
    """User-made files and folders at the names a command might stage, set aside or lock beside `name`."""
    for decoy in (f"{name}.tmp-site", f"{name}.old-site", f".{name}.partial", f"{name}.tmp", f".{name}.old"):
        (parent / decoy).mkdir()
        (parent / decoy / "mine.txt").write_text(f"the user's {decoy}")
    (parent / f".{name}.keme-lock.notes").write_text("the user's notes")
    return _tree(parent)


def test_made_directory_is_fresh_and_marked(tmp_path):
    made = Made()
    first, second = made.directory(tmp_path, "out.site"), made.directory(tmp_path, "out.site")
    assert first != second
    assert (first / MARK).read_text() == made.token


def test_remove_leaves_a_directory_it_did_not_make(tmp_path):
    theirs = tmp_path / ".out.site.keme-abc"
    theirs.mkdir()
    (theirs / MARK).write_text("someone else's token")
    assert Made().remove(theirs) is False
    assert (theirs / MARK).read_text() == "someone else's token"


def test_swap_in_replaces_the_earlier_output_and_leaves_only_it(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("before")
    made = Made()
    staged = made.directory(tmp_path, "out.site")
    (staged / "new.txt").write_text("after")
    made.swap_in(staged, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert _tree(out) == {"new.txt": b"after"}


def test_cleanup_after_a_failure_removes_only_the_staging(tmp_path):
    made = Made()
    staged = made.directory(tmp_path, "out.site")
    (tmp_path / "keep").mkdir()
    made.cleanup()
    assert not staged.exists()
    assert (tmp_path / "keep").is_dir()


def test_view_leaves_user_folders_beside_its_output(tmp_path):
    before = _decoys(tmp_path, "site")
    write_site(sample_dataset(), [], tmp_path / "site")
    write_site(sample_dataset(), [], tmp_path / "site", force=True)
    after = _tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("site")} == {
        k: v for k, v in before.items() if not k.startswith("site")
    }
    assert all(after[k] == v for k, v in before.items())


def test_a_second_holder_of_a_target_is_refused(tmp_path):
    out = tmp_path / "site"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DirectoryLocked, match="in use by pid"):
            with target_lock(out):
                pass
    finally:
        holder.communicate("")
    with target_lock(out):  # released when the holder ended
        pass


def test_a_user_file_at_the_lock_name_is_refused_and_kept(tmp_path):
    (tmp_path / LOCK_FILE).write_text("my notes, not a lock")
    with pytest.raises(KemeError, match="not made by keme"):
        with directory_lock(tmp_path):
            pass
    assert (tmp_path / LOCK_FILE).read_text() == "my notes, not a lock"


def test_a_symlink_at_the_lock_name_is_refused_and_its_file_kept(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / ".site.keme-lock").symlink_to(target)
    with pytest.raises(KemeError, match="not made by keme"):
        with target_lock(tmp_path / "site"):
            pass
    assert target.read_text() == "keep me"


def test_a_stale_keme_lock_is_taken_over(tmp_path):
    lock = tmp_path / LOCK_FILE
    lock.write_text('{"pid": 999999, "command": "keme synth", "started": 0}')
    with directory_lock(tmp_path):
        pass
    assert not lock.exists()


def test_recover_refuses_a_stage_keme_did_not_make(tmp_path):
    (tmp_path / STAGE).mkdir()
    (tmp_path / STAGE / "draft.txt").write_text("the user's draft")
    with pytest.raises(KemeError, match="not made by keme"):
        recover(tmp_path)
    assert (tmp_path / STAGE / "draft.txt").read_text() == "the user's draft"


def test_recover_removes_an_empty_stage(tmp_path):
    (tmp_path / STAGE).mkdir()
    assert recover(tmp_path) == "rolled back"
    assert not (tmp_path / STAGE).exists()


def test_synth_refuses_a_work_folder_it_did_not_make(tmp_path):
    (tmp_path / WORK).mkdir()
    (tmp_path / WORK / "todo.txt").write_text("the user's list")
    with pytest.raises(KemeError, match="not made by keme synth"):
        prepare_output(tmp_path, small_config(), resume=False, force=True)
    remove_work(tmp_path)
    assert (tmp_path / WORK / "todo.txt").read_text() == "the user's list"


def test_synth_refuses_a_work_folder_whose_identity_file_is_not_its_own(tmp_path):
    (tmp_path / WORK).mkdir()
    (tmp_path / WORK / "identity.json").write_text("my own notes")
    with pytest.raises(KemeError, match="not made by keme synth"):
        prepare_output(tmp_path, small_config(), resume=False, force=True)
    remove_work(tmp_path)
    assert (tmp_path / WORK / "identity.json").read_text() == "my own notes"

"""Atomic writes and JSONL reading with precise errors."""

from __future__ import annotations

import pytest

from keme.dataset.io import atomic_write_text, read_jsonl, write_jsonl
from keme.errors import KemeError
from keme.models import Message


def test_atomic_write_leaves_no_temp_files(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "hello")
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "hello"


def test_jsonl_round_trip_and_hash_is_stable(tmp_path):
    records = [Message(id=f"m{i}", role="user", content=f"hi {i}", timestamp="2026-01-01T10:00:00") for i in range(3)]
    first = write_jsonl(tmp_path / "a.jsonl", records)
    second = write_jsonl(tmp_path / "b.jsonl", records)
    assert first == second and first[1] == 3
    assert read_jsonl(tmp_path / "a.jsonl", Message) == records


def test_corrupt_line_names_file_and_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "m1", "role": "user", "content": "x", "timestamp": "2026-01-01T10:00:00"}\n{oops\n')
    with pytest.raises(KemeError, match=r"m\.jsonl:2: not valid JSON"):
        read_jsonl(path, Message)


def test_invalid_record_names_the_field(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "m1", "role": "robot", "content": "x", "timestamp": "2026-01-01T10:00:00"}\n')
    with pytest.raises(KemeError, match=r"m\.jsonl:1: invalid Message: role"):
        read_jsonl(path, Message)

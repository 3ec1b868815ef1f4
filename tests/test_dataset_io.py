"""Atomic writes and JSONL reading with precise errors."""

from __future__ import annotations

import hashlib

import pytest

from keme.dataset.io import atomic_write_bytes, atomic_write_text, iter_jsonl, jsonl_bytes, scan_records
from keme.errors import KemeError
from keme.models import Message


def test_atomic_write_leaves_no_temp_files(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "hello")
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "hello"


def test_jsonl_round_trip_and_hash_is_stable(tmp_path):
    records = [
        Message(id=f"m{i}", role="user", content=f"hi {i}", timestamp="2026-01-01T10:00:00") for i in range(3)
    ]
    (first, count), (second, _) = jsonl_bytes(records), jsonl_bytes(records)
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(second).hexdigest() and count == 3
    atomic_write_bytes(tmp_path / "a.jsonl", first)
    assert list(iter_jsonl(tmp_path / "a.jsonl", Message)) == records


def test_corrupt_line_names_file_and_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(
        '{"id": "m1", "role": "user", "content": "x", "timestamp": "2026-01-01T10:00:00"}\n{oops\n'
    )
    with pytest.raises(KemeError, match=r"m\.jsonl:2: not valid JSON"):
        list(iter_jsonl(path, Message))


def test_invalid_record_names_the_field(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "m1", "role": "robot", "content": "x", "timestamp": "2026-01-01T10:00:00"}\n')
    with pytest.raises(KemeError, match=r"m\.jsonl:1: invalid Message: role"):
        list(iter_jsonl(path, Message))


MESSAGE = '{"id": "m%d", "role": "user", "content": "x", "timestamp": "2026-01-01T10:00:00"}\n'


def test_invalid_utf8_names_file_line_and_byte(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_bytes((MESSAGE % 1).encode() + b'{"id": "m2", "content": "caf\xe9"}\n')
    with pytest.raises(KemeError, match=r"m\.jsonl:2: not valid UTF-8 \(byte 0xe9 at column 29\).*re-encode"):
        list(iter_jsonl(path, Message))


def test_scan_keeps_the_good_records_and_names_every_bad_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_bytes(
        (MESSAGE % 1).encode() + b"\xff\n" + (MESSAGE % 3).encode() + b"[1, 2]\n" + b'{"id": "m5"'
    )
    records, faults = scan_records(path, path.read_bytes(), Message)
    assert [r.id for r in records] == ["m1", "m3"]
    assert [(f.line, f.message.split(" (")[0]) for f in faults] == [
        (2, "not valid UTF-8"),
        (4, "expected a JSON object"),
        (5, "not valid JSON"),
    ]
    assert "was the file truncated?" in faults[2].message


def test_a_record_of_the_wrong_json_type_says_what_was_expected(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('"just a string"\n')
    with pytest.raises(KemeError, match=r"m\.jsonl:1: expected a JSON object \(a Message record\), got str"):
        list(iter_jsonl(path, Message))


def test_records_are_counted_whatever_the_bytes(tmp_path):
    from keme.dataset.io import count_records

    path = tmp_path / "m.jsonl"
    path.write_bytes(b"\xff\xfe\n\n{}\n")
    assert count_records(path) == 2


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b'{"name": "x", "files": {', r"manifest\.json: not valid JSON"),
        (b'{"name": "x\xff", "files": {}}', r"manifest\.json: not valid UTF-8"),
        (b"[]", r"manifest\.json: expected a JSON object"),
        (b'{"name": "x"}', r"manifest\.json: not a valid manifest: files: Field required"),
        (
            b'{"name": "x", "files": {"../x.jsonl": {"sha256": "0", "records": 0, "bytes": 0}}}',
            r"relative path inside the dataset",
        ),
        (
            b'{"name": "x", "files": {"/etc/passwd": {"sha256": "0", "records": 0, "bytes": 0}}}',
            r"relative path inside the dataset",
        ),
    ],
)
def test_a_bad_manifest_is_named_with_the_fix(tmp_path, content, match):
    from keme.dataset.manifest import read_manifest

    (tmp_path / "manifest.json").write_bytes(content)
    with pytest.raises(KemeError, match=match):
        read_manifest(tmp_path)


def test_a_manifest_may_list_files_in_subdirectories(tmp_path):
    from keme.dataset.manifest import read_manifest

    (tmp_path / "manifest.json").write_text(
        '{"name": "x", "files": {"images/p01-img001.png": {"sha256": "0", "records": 1, "bytes": 3}}}'
    )
    assert list(read_manifest(tmp_path).files) == ["images/p01-img001.png"]


def test_a_written_file_is_readable_by_others_as_the_umask_allows(tmp_path):
    """mkstemp makes private 0600 files; a dataset or an export is meant to be shared like any file."""
    import os

    from keme.dataset import io

    atomic_write_text(tmp_path / "out.json", "{}")
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == 0o666 & ~io._UMASK
    assert os.access(tmp_path / "out.json", os.R_OK)

"""keme.yamlload: the one YAML reader, bounded and strict, every refusal named with file:line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from keme.errors import KemeError
from keme.yamlload import MAX_BYTES, MAX_DEPTH, MAX_INT_DIGITS, YamlError, load, parse, read_text


def bomb(levels: int, width: int = 9) -> str:
    """The "billion laughs": each level a list of `width` aliases of the one before."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_a_yaml_error_is_a_kemeerror_and_a_valueerror():
    assert issubclass(YamlError, KemeError) and issubclass(YamlError, ValueError)


def test_a_duplicate_key_is_refused_naming_both_lines():
    with pytest.raises(YamlError, match=r"p\.yaml:3:1: .*duplicate key 'bm25' \(first given on line 1\)"):
        parse("bm25: {k1: 1.2}\noracle: {}\nbm25: {k1: 2}\n", "p.yaml")


def test_a_duplicate_key_in_json_is_refused():
    with pytest.raises(YamlError, match=r"duplicate key 'systems'"):
        parse('{"systems": "bm25", "systems": "oracle"}', "e.json")


def test_keys_equal_as_values_are_duplicates():
    with pytest.raises(YamlError, match=r"duplicate key 1"):
        parse("1: a\n0x1: b\n")


def test_a_merged_key_overridden_by_one_written_out_is_not_a_duplicate():
    data = parse("base: &b {k: 10, depth: 50}\nrun:\n  <<: *b\n  k: 30\n").data
    assert data["run"] == {"k": 30, "depth": 50}


def test_aliases_within_the_bound_are_read():
    data = parse("care: &care [dry, cool]\nphone: *care\nlaptop: *care\n").data
    assert data == {"care": ["dry", "cool"], "phone": ["dry", "cool"], "laptop": ["dry", "cool"]}


def test_an_alias_bomb_is_refused_before_it_is_built():
    with pytest.raises(YamlError, match=r"expands to more than 200000 values through its aliases"):
        parse(bomb(9), "b.yaml")


def test_an_alias_inside_the_value_it_names_is_refused():
    with pytest.raises(YamlError, match=r"an alias refers to a value that contains it"):
        parse("a: &loop [1, *loop]\n")


def test_nesting_beyond_the_bound_is_refused_with_its_line():
    deep = "x: 1\ny: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    with pytest.raises(YamlError, match=rf"d\.yaml:2:\d+: .*nested too deeply \(more than {MAX_DEPTH}"):
        parse(deep, "d.yaml")


def test_nesting_too_deep_for_the_parser_is_refused_not_a_recursion_error():
    with pytest.raises(YamlError, match=r"nested too deeply"):
        parse("x: " + "[" * 50_000 + "]" * 50_000)


def test_an_integer_of_too_many_digits_is_refused_with_its_line():
    with pytest.raises(YamlError, match=r"c\.yaml:2:7: .*an integer of 5000 digits; at most 100"):
        parse("name: t\nseed: " + "7" * 5000 + "\n", "c.yaml")


def test_a_large_integer_within_the_bound_is_read_for_the_schema_to_judge():
    assert parse("months: " + "1" * MAX_INT_DIGITS).data == {"months": int("1" * MAX_INT_DIGITS)}


def test_dates_and_equals_signs_stay_text():
    assert parse("start: 2026-02-30\nop: =\n").data == {"start": "2026-02-30", "op": "="}


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("x: !!binary aGVsbG8=\n", "!!binary"),
        ("x: !!set {a, b}\n", "!!set"),
        ("x: !!timestamp 2026-01-01\n", "!!timestamp"),
        ("x: !!python/object/apply:os.system [ls]\n", "!!python/object/apply:os.system"),
        ("x: !custom 1\n", "!custom"),
    ],
)
def test_tags_beyond_json_values_are_refused(text, tag):
    with pytest.raises(YamlError, match=rf"t\.yaml:1:4: the tag {tag} is not accepted"):
        parse(text, "t.yaml")


def test_a_value_its_tag_cannot_read_is_named():
    with pytest.raises(YamlError, match=r"'maybe' cannot be read as !!bool"):
        parse("x: !!bool maybe\n")


def test_a_json_surrogate_pair_is_one_character():
    assert parse('{"name": "\\ud83d\\ude00 Ana"}').data == {"name": "\U0001f600 Ana"}


def test_a_lone_surrogate_escape_is_refused():
    with pytest.raises(YamlError, match=r"escape without its pair"):
        parse('name: "\\ud83d"\n')


def test_a_control_character_is_refused_with_its_line():
    with pytest.raises(YamlError, match=r"c\.yaml:2: .*character #x0001 is not allowed"):
        parse("a: b\nc: \x01\n", "c.yaml")


def test_two_documents_are_refused():
    with pytest.raises(YamlError, match=r"expected a single document"):
        parse("a: 1\n---\nb: 2\n")


def test_an_empty_document_is_none():
    assert parse("# nothing\n").data is None


def test_the_document_knows_the_line_of_each_value():
    document = parse("name: t\npersonas:\n  - {language: en}\n  - {language: zh}\n", "c.yaml")
    assert document.where(("personas", 1, "language")) == "c.yaml:4"
    assert document.where(("personas", 0, "months")) == "c.yaml:3"  # missing: its mapping's line


def test_a_file_is_read_with_its_name_in_errors(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("bm25: {}\nbm25: {}\n", encoding="utf-8")
    with pytest.raises(YamlError, match=r"--params .*p\.yaml:2:1: .*duplicate key"):
        load(path, f"--params {path}")


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfk: 3\n")
    assert load(path).data == {"k": 3}


def test_invalid_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(YamlError, match=r"c\.yaml:2: not valid UTF-8 \(byte 0xe9 at offset 11\)"):
        read_text(path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "settings.yaml"
    os.mkfifo(fifo)
    with pytest.raises(YamlError, match=r"not a regular file"):
        read_text(fifo)


def test_a_device_is_refused():
    with pytest.raises(YamlError, match=r"/dev/zero: not a regular file"):
        read_text(Path("/dev/zero"))


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(YamlError, match=r"is a directory; pass a YAML file"):
        read_text(tmp_path)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(YamlError, match=r"nowhere\.yaml: cannot read \(No such file or directory\)"):
        read_text(tmp_path / "nowhere.yaml")


def test_a_file_over_the_size_bound_is_refused_unread(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(YamlError, match=rf"{MAX_BYTES + 1} bytes, more than the {MAX_BYTES}"):
        read_text(path)


def test_shipped_files_get_the_same_checks():
    with pytest.raises(YamlError, match=r"duplicate key 'a'"):
        parse("a: 1\na: 2\n", shipped=True)
    with pytest.raises(YamlError, match=r"expands to more than"):
        parse(bomb(9), shipped=True)


def test_every_shipped_yaml_file_reads():
    root = Path(__file__).resolve().parents[1] / "keme"
    files = sorted(root.rglob("*.yaml"))
    assert files and all(load(path, shipped=True).data is not None for path in files)

"""Hostile YAML through every option that reads one: `keme synth --config`, `keme eval --config`, `--params`,
`--llm` and `keme hardneg --llm` all read it with keme.yamlload, so each refuses the same way.

Hypothesis writes the documents: duplicate keys (refused, never the last one kept), alias bombs, integers
of thousands of digits, deep nesting, invalid UTF-8, control characters, tags beyond JSON's values, random
bytes and random well-formed documents. A hostile document must be refused naming the problem; any other
must be refused or accepted, never a crash. FIFOs run as real subprocesses (a reader that opened one
would hang); devices and directories in process. The commands run on a dataset path that does not
exist, so a document that is accepted ends at the dataset check instead of running anything: the
assertions on the message say which check refused.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from probe import ROOT, run

pytestmark = pytest.mark.fault

NO_DATA = str(ROOT / "data" / "no-such-dataset")
PROBES = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _eval(option: str) -> Callable[[str, Path], list[str]]:
    return lambda path, tmp: [
        "keme", "eval", "--data", NO_DATA, "--systems", "bm25", "--out", str(tmp / "run"), option, path
    ]  # fmt: skip


# name -> (the command around a file, a key the file may hold, two values it accepts, a numeric key)
READERS: dict[str, tuple[Callable[[str, Path], list[str]], str, tuple[str, str], str]] = {
    "synth --config": (
        lambda path, tmp: ["keme", "synth", "--config", path, "--out", str(tmp / "out")],
        "seed",
        ("1", "2"),
        "seed",
    ),
    "eval --config": (_eval("--config"), "systems", ("bm25", "oracle"), "k"),
    "eval --params": (_eval("--params"), "bm25", ("{k1: 1.2}", "{k1: 2.0}"), "bm25_k1"),
    "eval --llm": (_eval("--llm"), "model", ("small", "large"), "max_tokens"),
    "hardneg --llm": (
        lambda path, tmp: ["keme", "hardneg", NO_DATA, "--out", str(tmp / "hard"), "--llm", path],
        "model",
        ("small", "large"),
        "max_tokens",
    ),
}


def feed(reader: str, content: str | bytes, expect: str = "error"):
    """Run the reader's command on a file holding `content`, in process; the probe's Run."""
    command = READERS[reader][0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.yaml"
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return run(command(str(path), Path(tmp)), expect=expect, in_process=True)


def assert_refused(result, match: str) -> None:
    text = " ".join(result.output.split())
    assert result.outcome == "clear", f"{result.outcome} (exit {result.returncode}):\n{result.output[-2000:]}"
    assert re.search(match, text), f"refused, but not for the document ({match!r}):\n{text[-2000:]}"


def numeric(reader: str, value: str) -> str:
    """`value` under the reader's numeric key (nested for --params)."""
    key = READERS[reader][3]
    return f"bm25:\n  k1: {value}\n" if key == "bm25_k1" else f"{key}: {value}\n"


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("KEME_DEBUG", raising=False)


# ---------------------------------------------------------------- documents
names = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)


@st.composite
def duplicated(draw, reader: str) -> str:
    """The reader's own key given twice with two values it accepts, other keys around, block or flow."""
    _, key, (first, second), _ = READERS[reader]
    others = draw(st.lists(names.filter(lambda n: n != key), max_size=3, unique=True))
    pairs = [(k, "1") for k in others]
    pairs.insert(draw(st.integers(0, len(pairs))), (key, first))
    pairs.insert(draw(st.integers(0, len(pairs))), (key, second))
    if draw(st.booleans()):
        return "".join(f"{k}: {v}\n" for k, v in pairs)
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}\n"


@st.composite
def alias_bombs(draw) -> str:
    width = draw(st.integers(6, 12))
    levels = draw(st.integers(7, 10))
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@st.composite
def deep(draw) -> str:
    depth = draw(st.integers(65, 5000))
    if draw(st.booleans()):  # one bracket a line (a single line costs the scanner a second: one case below)
        return "x: " + "[\n" * depth + "]" * depth + "\n"
    return "".join("  " * i + f"k{i}:\n" for i in range(min(depth, 400))) + "  " * min(depth, 400) + "v\n"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


# ---------------------------------------------------------------- hostile documents: refused, saying why
@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(data=st.data())
def test_a_duplicate_key_is_refused_not_last_wins(reader, data):
    document = data.draw(duplicated(reader))
    key = READERS[reader][1]
    assert_refused(feed(reader, document), rf"duplicate key '{key}' \(first given on line \d+\)")


@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(document=alias_bombs())
def test_an_alias_bomb_is_refused(reader, document):
    assert_refused(feed(reader, document), r"input\.yaml:\d+:\d+: expands to more than \d+ values")


@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(digits=st.integers(101, 8000), sign=st.sampled_from(["", "-", "+"]))
def test_an_integer_of_thousands_of_digits_is_refused(reader, digits, sign):
    document = numeric(reader, sign + "9" * digits)
    assert_refused(
        feed(reader, document), rf"input\.yaml:\d+:\d+: not valid YAML: an integer of {digits} digits"
    )


@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(document=deep())
def test_deep_nesting_is_refused(reader, document):
    assert_refused(feed(reader, document), r"input\.yaml.*nested too deeply")


@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(
    before=st.integers(0, 3),
    bad=st.sampled_from([b"\xff", b"\xc3(", b"\xe9", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]),
)
def test_invalid_utf8_is_refused_with_its_line(reader, before, bad):
    document = b"".join(f"k{i}: v\n".encode() for i in range(before)) + b"name: caf" + bad + b"\n"
    assert_refused(feed(reader, document), rf"input\.yaml:{before + 1}: not valid UTF-8")


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(
    ("document", "match"),
    [
        ("a: b\nc: \x01\n", r"input\.yaml:2: not valid YAML: character #x0001"),
        ('model: "\\ud83d"\n', r"escape without its pair"),
        ("x: !!binary aGVsbG8=\n", r"the tag !!binary is not accepted"),
        ("x: !!python/object/apply:os.system [ls]\n", r"the tag !!python/object/apply:os.system"),
        ("x: &a [1, *a]\n", r"an alias refers to a value that contains it"),
        ("a: 1\n---\nb: 2\n", r"expected a single document"),
        ("x: " + "[" * 20_000 + "]" * 20_000 + "\n", r"input\.yaml:1:\d+: not valid YAML: nested too deeply"),
        ("x: !!float one\n", r"'one' cannot be read as !!float"),
    ],
    ids=[
        "control",
        "surrogate",
        "binary",
        "python",
        "recursive",
        "two-documents",
        "one-line-nesting",
        "bad-float",
    ],
)
def test_a_malformed_document_is_refused(reader, document, match):
    assert_refused(feed(reader, document), match)


# ---------------------------------------------------------------- anything else: never a crash
@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(value=json_values, as_json=st.booleans())
def test_any_wellformed_document_is_refused_or_read(reader, value, as_json):
    document = json.dumps(value) if as_json else yaml.safe_dump(value, allow_unicode=True)
    result = feed(reader, document)
    assert result.outcome in ("clear", "ok"), f"{result.outcome}:\n{result.output[-2000:]}"


@pytest.mark.parametrize("reader", list(READERS))
@PROBES
@given(content=st.binary(max_size=200))
def test_random_bytes_are_refused_or_read(reader, content):
    result = feed(reader, content)
    assert result.outcome in ("clear", "ok"), f"{result.outcome}:\n{result.output[-2000:]}"


# ---------------------------------------------------------------- what is not a file
@pytest.mark.parametrize("reader", list(READERS))
def test_a_fifo_is_refused_without_waiting_for_a_writer(reader, tmp_path):
    fifo = tmp_path / "settings.yaml"
    os.mkfifo(fifo)
    result = run(READERS[reader][0](str(fifo), tmp_path), expect="error", timeout=60)
    assert_refused(result, r"settings\.yaml: not a regular file")


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(
    ("path", "match"), [("/dev/zero", r"/dev/zero: not a regular file"), ("DIR", r"is a directory")]
)
def test_a_device_or_directory_is_refused(reader, path, match, tmp_path):
    command = READERS[reader][0](str(tmp_path) if path == "DIR" else path, tmp_path)
    assert_refused(run(command, expect="error", in_process=True), match)


@pytest.mark.parametrize("reader", list(READERS))
def test_a_file_over_a_mebibyte_is_refused_unread(reader):
    assert_refused(feed(reader, "# padding\n" * 110_000), r"more than the 1048576 a YAML file here may have")


# ---------------------------------------------------------------- the shipped settings still read
def test_the_paper_eval_config_still_reads(tmp_path):
    result = feed("eval --config", (ROOT / "configs/eval-paper.yaml").read_text(encoding="utf-8"))
    assert_refused(result, r"no-such-dataset")  # the file passed; the missing dataset stopped the run

"""Import and eval edge cases (issue 35, class 8): golds that say nothing, JSON Lines with Unicode line
separators, a full disk, an unusable LLM cache, and the long end of the config limits.

- A gold that says nothing (empty, blank, a JSON NaN, "nan", "None", "N/A") imports flagged `empty_gold`
  in every importer alike, so eval leaves it out by default instead of marking every answer wrong.
- JSON Lines split at \\n only: U+2028, U+2029, \\x85, \\x1c-\\x1e inside a string are text, not line ends.
- A full disk or a file size limit while `keme eval` writes is a message naming the file (exit 2), never
  exit 70; simulated with RLIMIT_FSIZE in the child (SIGXFSZ ignored, so a write fails with EFBIG) and with
  an injected ENOSPC in process.
- An LLM cache that cannot be used (KEME_LLM_CACHE below a regular file) is a warning; the run goes on
  without it (a cache only saves calls).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from probe import ROOT, classify, raises_clearly, record, refuses, works
from test_fault_import import _pair, lme_instance, locomo_sample, mobilemem_sample, omni_release

from eval.importers.locomo import import_locomo
from eval.importers.longmemeval import import_longmemeval
from eval.importers.mobilemem import import_mobilemem
from eval.importers.mobilemem_omni import import_mobilemem_omni
from eval.log import Log
from keme.dataset import Dataset
from keme.dataset import io as dataset_io
from keme.dataset.io import atomic_write_text, text_lines
from keme.errors import KemeError, WriteFailed
from keme.llm.cache import DiskCache
from keme.validate import validate

sys.path.insert(0, str(ROOT / "tests"))
from llm_doubles import Endpoint  # noqa: E402

pytestmark = pytest.mark.fault

SAMPLE = ROOT / "data/sample"
SEPARATORS = "\u2028\u2029\x85\x1c\x1d\x1e\x0b\x0c\r"


# ---------------------------------------------------------------- golds that say nothing
def _locomo(tmp: Path, gold: Any) -> dict:
    samples = [locomo_sample("c1"), locomo_sample("c2")]
    samples[0]["qa"][0]["answer"] = gold
    path = tmp / "in.json"
    path.write_text(json.dumps(samples))
    return import_locomo(path, tmp / "out")


def _longmemeval(tmp: Path, gold: Any) -> dict:
    instances = [lme_instance("q1"), lme_instance("q2")]
    instances[0]["answer"] = gold
    path = tmp / "in.json"
    path.write_text(json.dumps(instances))
    return import_longmemeval(path, tmp / "out")


def _mobilemem(tmp: Path, gold: Any) -> dict:
    samples = [mobilemem_sample("u1"), mobilemem_sample("u2")]
    _pair(samples[0])["golden_answers"] = [gold]
    path = tmp / "in.json"
    path.write_text(json.dumps(samples))
    return import_mobilemem(path, tmp / "out")


def _omni(tmp: Path, gold: Any) -> dict:
    return import_mobilemem_omni(
        omni_release(tmp / "release", lambda u, q: q[0].update(answer=gold)), tmp / "out"
    )


IMPORTERS = {"locomo": _locomo, "longmemeval": _longmemeval, "mobilemem": _mobilemem, "omni": _omni}
NOTHING = {"empty": "", "blank": "  ", "json_nan": float("nan"), "nan": "nan", "None": "None", "n/a": "N/A"}


@pytest.mark.parametrize("gold", sorted(NOTHING))
@pytest.mark.parametrize("importer", sorted(IMPORTERS))
def test_a_gold_that_says_nothing_imports_flagged_in_every_importer(tmp_path, importer, gold):
    try:
        IMPORTERS[importer](tmp_path, NOTHING[gold])
    except KemeError as exc:
        record("clear")
        raise AssertionError(f"refused a file with one empty gold: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - the probe classifies it
        record("crash")
        raise AssertionError(f"crash: {type(exc).__name__}: {exc}") from exc
    first = Dataset.load(tmp_path / "out").qa[0]
    flagged = any(flag.startswith("empty_gold") for flag in first.flags)
    record("ok" if flagged and validate(tmp_path / "out") == [] else "silent")
    assert flagged, first.flags


def test_a_nan_beside_a_real_golden_answer_is_not_the_gold(tmp_path):
    samples = [mobilemem_sample("u1")]
    _pair(samples[0])["golden_answers"] = [float("nan"), "", "Acme"]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(samples))
    import_mobilemem(path, tmp_path / "out")
    item = Dataset.load(tmp_path / "out").qa[0]
    record("ok" if item.answer == "Acme" else "silent")
    assert item.answer == "Acme" and not item.flags


# ---------------------------------------------------------------- JSON Lines and Unicode line separators
def test_json_lines_split_at_newlines_only():
    assert text_lines('{"a": "x\u2028y"}\r\n{"b": "\x85"}\n') == ['{"a": "x\u2028y"}', '{"b": "\x85"}']


@settings(
    max_examples=15, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet=st.sampled_from("ab \u00e9\u4e2d" + SEPARATORS), min_size=1, max_size=12))
def test_json_lines_with_any_line_separator_in_a_string_import_verbatim(tmp_path_factory, noise):
    tmp = tmp_path_factory.mktemp("lme")
    instance = lme_instance("q1")
    instance["haystack_sessions"][1][1]["content"] = f"Pack light.{noise}"
    path = tmp / "lme.jsonl"
    path.write_text(json.dumps(instance, ensure_ascii=False) + "\n", encoding="utf-8", newline="")
    try:
        import_longmemeval(path, tmp / "out")
    except KemeError as exc:
        record("clear")  # a valid file refused
        raise AssertionError(str(exc)) from exc
    said = [m.content for s in Dataset.load(tmp / "out").sessions for m in s.messages]
    kept = any(content.startswith("Pack light.") and noise.strip() in content for content in said)
    record("ok" if kept else "silent")
    assert kept, said


def test_cli_omni_users_with_a_line_separator_import(tmp_path):
    def change(users: list, questions: list) -> None:
        users[0]["sessions"][1]["dialogue"][0]["content"] = "A hike\u2028on Sunday.\u2029"

    release = omni_release(tmp_path / "release", change)
    users = json.loads((release / "data.jsonl").read_text())
    (release / "data.jsonl").write_text(json.dumps(users, ensure_ascii=False), encoding="utf-8")
    works(["keme", "import", "mobilemem-omni", str(release), "--out", str(tmp_path / "out")])
    said = [m.content for s in Dataset.load(tmp_path / "out").sessions for m in s.messages]
    assert any("A hike\u2028on Sunday." in content for content in said), said


# ---------------------------------------------------------------- a full disk during eval
def _limited(limit: int):
    def start() -> None:  # in the child: a write past `limit` bytes fails with EFBIG instead of a signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return start


@pytest.mark.parametrize("limit", [0, 3000])
def test_cli_eval_on_a_full_disk_names_the_file_not_an_internal_error(tmp_path, limit):
    out = tmp_path / "run"
    args = [sys.executable, "-m", "keme.cli", "eval", "--data", str(SAMPLE), "--systems", "bm25"]
    env = os.environ | {"PYTHONPATH": str(ROOT), "COLUMNS": "500"}
    env.pop("KEME_DEBUG", None)
    done = subprocess.run(
        [*args, "--out", str(out), "--limit", "4"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=_limited(limit),
    )
    text = done.stdout + done.stderr
    outcome = record(classify(done.returncode, text, "error"))
    assert outcome == "clear" and done.returncode == 2, f"{outcome} (exit {done.returncode}):\n{text[-2000:]}"
    # the file that could not be written (the run's lock or an output), named with the reason
    assert "(File too large)" in text and str(out) in text, text


def _no_space(*args: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_while_writing_a_file_names_it_and_leaves_no_temp_file(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset_io.os, "fsync", _no_space)
    target = tmp_path / "summary.json"
    exc = raises_clearly(lambda: atomic_write_text(target, "{}"), WriteFailed, match="disk is full")
    assert str(target) in str(exc) and isinstance(exc, OSError) and exc.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_while_appending_to_a_run_log_names_it(tmp_path, monkeypatch):
    log = Log(tmp_path / "retrieve.jsonl")
    monkeypatch.setattr("eval.log.os.write", _no_space)
    exc = raises_clearly(lambda: log.append({"question_id": "q1"}), WriteFailed, match="retrieve.jsonl")
    assert "No space left on device" in str(exc)


# ---------------------------------------------------------------- an LLM cache that cannot be used
def test_an_unusable_llm_cache_warns_once_and_is_a_miss(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    warnings: list[str] = []
    cache = DiskCache(tmp_path / "file" / "cache", on_warning=warnings.append)
    cache.put("ab12", {"q": 1}, {"content": "x", "prompt_tokens": 1, "completion_tokens": 1})
    cache.put("ab13", {"q": 2}, {"content": "y", "prompt_tokens": 1, "completion_tokens": 1})
    got = cache.get("ab12")
    record("ok" if got is None and len(warnings) == 1 else "silent")
    assert got is None and len(warnings) == 1 and "KEME_LLM_CACHE" in warnings[0]


def test_a_damaged_llm_cache_entry_is_a_miss(tmp_path):
    cache = DiskCache(tmp_path)
    path = tmp_path / "ab" / "ab12.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"request": {}, "response": {"content": None}}))
    assert cache.get("ab12") is None


def test_cli_eval_with_an_unwritable_llm_cache_warns_and_scores(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with Endpoint("ok") as endpoint:
        settings_path = tmp_path / "llm.yaml"
        settings_path.write_text(
            json.dumps(
                {
                    "provider": "openai",
                    "base_url": endpoint.url,
                    "model": "probe-model",
                    "api_key_env": "KEME_PROBE_KEY",
                    "timeout_s": 5,
                }
            )
        )
        result = works(
            [
                "keme",
                "eval",
                "--data",
                str(SAMPLE),
                "--systems",
                "bm25",
                "--out",
                str(tmp_path / "run"),
                "--limit",
                "1",
                "--reader",
                "openai",
                "--llm",
                str(settings_path),
            ],
            timeout=120,
            env={"KEME_LLM_CACHE": str(tmp_path / "file" / "cache"), "KEME_PROBE_KEY": "sk-probe"},
        )
    assert "warning: LLM cache" in result.output and "KEME_LLM_CACHE" in result.output
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["systems"]["bm25"]["answers_missing"] == 0


def test_cli_synth_into_a_read_only_place_is_refused_by_name(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    config = tmp_path / "c.yaml"
    config.write_text("name: t\nseed: 1\npersonas:\n  - {language: en, start: 2026-01-01, months: 1}\n")
    refuses(
        ["keme", "synth", "--config", str(config), "--out", str(tmp_path / "file" / "out")],
        match=r"file",
    )

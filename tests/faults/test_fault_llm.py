"""A failing model is an error, never a score: every broken endpoint stops `keme eval` and `keme synth`
with the message that says what to fix, within a bounded time, and never shows the key.

The endpoint is tests/llm_doubles.Endpoint on 127.0.0.1 in this process; keme runs as a subprocess.
Timeouts and retry budgets are small in the probes' LLM settings, so a hanging endpoint costs seconds.
"""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from probe import ROOT, record, refuses, run, works

sys.path.insert(0, str(ROOT / "tests"))
from llm_doubles import Endpoint  # noqa: E402

pytestmark = pytest.mark.fault
pytest.importorskip("openai")

SECRET = "sk-probe-LEAKED-IF-YOU-SEE-THIS-4242"
KEY_ENV = "KEME_PROBE_KEY"
FAST = {"timeout_s": 1, "connect_timeout_s": 1, "retry_budget_s": 2, "max_retries": 3, "backoff_base_s": 0.05}

# what the message must say, per endpoint behaviour (a space matches any whitespace: the terminal wraps lines)
REFUSALS = {
    "401": r"rejected the API key \(401\): check \$KEME_PROBE_KEY",
    "403": r"may not use model 'probe-model'.*\(403\).*permissions",
    "404": r"not found \(404\).*check llm.model and llm.base_url",
    "500-echo": r"server error \(500\).*\[redacted\].*has not answered a single request",
    "closed-port": r"cannot connect.*is the server running\? check llm.base_url",
    "hang": r"no (complete )?reply within .*\(llm.(timeout|deadline)_s\).*has not answered a single request",
    "garbage": r"did not reply as an OpenAI-compatible API.*check llm.base_url",
}
REFUSALS = {mode: pattern.replace(" ", r"\s+") for mode, pattern in REFUSALS.items()}


def llm_settings(url: str, cache) -> dict:
    return {
        "provider": "openai",
        "base_url": url,
        "model": "probe-model",
        "api_key_env": KEY_ENV,
        "cache_dir": str(cache),
    } | FAST


def closed_url() -> str:
    from keme.llm.server import free_port

    return f"http://127.0.0.1:{free_port()}/v1"


def leaks(result, *roots) -> bool:
    """Whether the key is in the output or in a file the command wrote (run directory, dataset, cache)."""
    return SECRET in result.output or any(
        SECRET in p.read_text(errors="ignore")
        for root in roots
        if root.exists()
        for p in root.rglob("*")
        if p.is_file()
    )


def no_secret_anywhere(result, *roots) -> None:
    """A probe of its own for endpoints that echo the key: leaking it is the silent failure."""
    leaked = leaks(result, *roots)
    record("silent" if leaked else "ok")
    assert not leaked, "the API key was written or printed"


# ---------------------------------------------------------------- keme eval --reader openai --llm FILE
def eval_args(tmp_path, url: str, limit: int = 1) -> list[str]:
    data = tmp_path / "data"
    if not data.exists():
        shutil.copytree(ROOT / "data/sample", data)
    settings = tmp_path / "llm.yaml"
    settings.write_text(json.dumps(llm_settings(url, tmp_path / "cache")))
    return [
        "keme",
        "eval",
        "--data",
        str(data),
        "--systems",
        "bm25",
        "--out",
        str(tmp_path / "run"),
        "--limit",
        str(limit),
        "--reader",
        "openai",
        "--llm",
        str(settings),
    ]


@pytest.mark.parametrize("mode", list(REFUSALS))
def test_eval_against_a_broken_endpoint_is_an_error_not_a_score(tmp_path, mode):
    if mode == "closed-port":
        result = refuses(
            eval_args(tmp_path, closed_url()), match=REFUSALS[mode], timeout=60, env={KEY_ENV: SECRET}
        )
    else:
        with Endpoint(mode) as endpoint:
            result = refuses(
                eval_args(tmp_path, endpoint.url), match=REFUSALS[mode], timeout=60, env={KEY_ENV: SECRET}
            )
    assert not (tmp_path / "run/summary.json").exists() and not (tmp_path / "run/bm25/answer.jsonl").exists()
    if mode == "500-echo":
        no_secret_anywhere(result, tmp_path / "run", tmp_path / "cache")
    assert not leaks(result, tmp_path / "run", tmp_path / "cache")


def test_eval_rides_out_a_429_and_scores_every_answer(tmp_path):
    with Endpoint("429-once") as endpoint:
        result = works(eval_args(tmp_path, endpoint.url), timeout=60, env={KEY_ENV: SECRET})
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert (
        summary["systems"]["bm25"]["answers_missing"] == 0 and summary["llm"]["eval.reader"]["retries"] == 1
    )
    assert re.search(r"LLM\s+requests:\s+2,\s+failed\s+0", result.stdout)


def test_eval_with_one_failed_answer_reports_it_and_never_stores_the_key(tmp_path):
    args = eval_args(tmp_path, "http://unused", limit=3)
    with Endpoint("fail-second") as endpoint:
        settings = json.loads((tmp_path / "llm.yaml").read_text()) | {"base_url": endpoint.url}
        (tmp_path / "llm.yaml").write_text(json.dumps(settings))
        result = works(args, timeout=60, env={KEY_ENV: SECRET})
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert (
        summary["systems"]["bm25"]["answers_missing"] == 1
        and "missing after failed LLM calls" in summary["note"]
    )
    assert re.search(r"failed\s+1", result.stdout)
    no_secret_anywhere(result, tmp_path / "run", tmp_path / "cache")
    with Endpoint("ok") as endpoint:  # the endpoint fixed: the rerun asks for the missing answer only
        settings |= {"base_url": endpoint.url}
        (tmp_path / "llm.yaml").write_text(json.dumps(settings))
        works(args, timeout=60, env={KEY_ENV: SECRET})
        assert endpoint.requests == 1
    assert json.loads((tmp_path / "run/summary.json").read_text())["systems"]["bm25"]["answers_missing"] == 0


def test_eval_with_a_key_env_that_is_not_set_names_the_variable(tmp_path):
    args = eval_args(tmp_path, "https://llm.example.invalid/v1")
    refuses(
        args,
        match=r"no\s+API\s+key:\s+set\s+the\s+environment\s+variable\s+KEME_PROBE_KEY",
        timeout=60,
        env={KEY_ENV: ""},
    )


# ---------------------------------------------------------------- keme synth --brain llm
def synth_args(tmp_path, url: str) -> list[str]:
    import yaml

    config = yaml.safe_load((ROOT / "tests/fixtures/llm-tiny.yaml").read_text())
    config["llm"] = llm_settings(url, tmp_path / "cache")
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return ["keme", "synth", "--config", str(path), "--out", str(tmp_path / "d"), "--brain", "llm"]


@pytest.mark.parametrize("mode", list(REFUSALS))
def test_synth_against_a_broken_endpoint_stops_instead_of_falling_back(tmp_path, mode):
    if mode == "closed-port":
        result = refuses(
            synth_args(tmp_path, closed_url()), match=REFUSALS[mode], timeout=90, env={KEY_ENV: SECRET}
        )
    else:
        with Endpoint(mode) as endpoint:
            result = refuses(
                synth_args(tmp_path, endpoint.url), match=REFUSALS[mode], timeout=90, env={KEY_ENV: SECRET}
            )
            assert endpoint.requests <= FAST["max_retries"] + 1  # stopped at the first call
    assert not (tmp_path / "d/manifest.json").exists()
    if mode == "500-echo":
        no_secret_anywhere(result, tmp_path / "d", tmp_path / "cache")
    assert not leaks(result, tmp_path / "d", tmp_path / "cache")


def test_synth_rides_out_a_429(tmp_path):
    with Endpoint("429-once") as endpoint:
        result = works(synth_args(tmp_path, endpoint.url), timeout=180, env={KEY_ENV: SECRET})
    synth = json.loads((tmp_path / "d/manifest.json").read_text())["stages"]["synth"]
    assert synth["agents"].get("realizer.accepted", 0) >= 1 and re.search(r"failed\s+0", result.stdout)


def test_synth_with_a_failing_call_over_the_limit_fails_after_saying_how_many(tmp_path):
    args = synth_args(tmp_path, "http://unused")
    config = (
        (tmp_path / "tiny.yaml")
        .read_text()
        .replace("max_retries: 3", "max_retries: 0\n  max_failure_fraction: 0.0")
    )
    (tmp_path / "tiny.yaml").write_text(config)
    with Endpoint("fail-second") as endpoint:
        (tmp_path / "tiny.yaml").write_text(config.replace("http://unused", endpoint.url))
        result = run(args, expect="error", timeout=180, env={KEY_ENV: SECRET})
    assert result.outcome == "clear", result.output[-2000:]
    assert re.search(r"failed\s+1", result.output) and re.search(
        r"too\s+many\s+LLM\s+calls\s+failed", result.output
    )
    no_secret_anywhere(result, tmp_path / "d", tmp_path / "cache")

"""A failing model is an error, never a score: the client's failure gate, retries within a time budget,
failed calls never cached or logged as answers, unreadable verdicts counted, secrets redacted.

The endpoint is a real HTTP server on loopback (tests/llm_doubles.Endpoint) where the transport matters,
and a scripted provider where only the client's logic does.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT
from llm_doubles import Endpoint, ScriptedProvider

from eval.llm_judge import LLMJudge
from eval.reader import LLMReader
from eval.run import Settings, run
from keme.llm import CallFailed, FatalError, LLMClient, LLMConfig
from keme.llm.errors import RetryableError
from keme.llm.health import check, summarize
from keme.llm.redact import redact

pytest.importorskip("openai")

SECRET = "sk-probe-SECRET-0123456789abcdef"


class Flaky:
    """A provider that raises the errors it is given, in order, then answers like the scripted one."""

    name = "local"

    def __init__(self, *errors: Exception):
        self.errors = list(errors)
        self.calls = 0

    def complete(self, messages, params, schema, timeout=None):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        if schema is None:
            return {"content": "an answer", "prompt_tokens": 3, "completion_tokens": 2, "model": "m"}
        return ScriptedProvider().complete(messages, params, schema)


def make_client(tmp_path, provider, clock=None, **extra) -> LLMClient:
    config = LLMConfig(cache_dir=str(tmp_path / "cache"), **({"backoff_base_s": 0.01} | extra))
    return LLMClient(
        config,
        provider=provider,
        sleep=clock.sleep if clock else (lambda s: None),
        **({"clock": clock.now} if clock else {}),
    )


class Clock:
    def __init__(self):
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def ask(client: LLMClient, text: str = "q"):
    return client.chat([{"role": "user", "content": text}], stage="t")


# ---------------------------------------------------------------- redaction
def test_redaction_removes_the_configured_key_and_anything_shaped_like_a_credential():
    text = (
        "{'Authorization': 'Bearer abc.def-123456', 'x-api-key': 'k-998877'} sk-live-abcdefgh1234 "
        "key=hunter22hunter"
    )
    clean = redact(text, ["hunter22hunter"])
    for secret in ("abc.def-123456", "k-998877", "sk-live-abcdefgh1234", "hunter22hunter"):
        assert secret not in clean
    assert clean.count("[redacted]") == 4


def test_every_llm_error_is_redacted_when_it_is_made():
    assert SECRET not in str(CallFailed(f"body echoed Authorization: Bearer {SECRET}"))


# ---------------------------------------------------------------- the failure gate
def test_a_failure_before_the_endpoint_ever_answered_stops_the_command(tmp_path):
    provider = Flaky(*[RetryableError("server error (503)")] * 10)
    with pytest.raises(FatalError, match="has not answered a single request"):
        ask(make_client(tmp_path, provider, max_retries=2))
    assert provider.calls == 3


def test_after_a_success_a_failed_call_is_counted_and_the_caller_carries_on(tmp_path):
    client = make_client(tmp_path, Flaky(), max_retries=1)
    ask(client, "first")
    client.provider.errors = [RetryableError("server error (503)")] * 2
    with pytest.raises(CallFailed, match="gave up after 2 attempts"):
        ask(client, "second")
    assert client.ledger.stages["t"].failures == 1
    assert ask(client, "third").content == "an answer"


def test_consecutive_failures_stop_the_command_as_an_endpoint_gone_down(tmp_path):
    client = make_client(tmp_path, Flaky(), max_retries=0, max_consecutive_failures=3)
    ask(client, "first")
    client.provider.errors = [RetryableError("server error (502)")] * 3
    for text in ("a", "b"):
        with pytest.raises(CallFailed):
            ask(client, text)
    with pytest.raises(FatalError, match="3 LLM calls in a row failed"):
        ask(client, "c")


def test_retries_stop_at_the_total_time_budget(tmp_path):
    clock = Clock()
    provider = Flaky(*[RetryableError("server error (500)")] * 100)
    client = make_client(
        tmp_path, provider, clock=clock, max_retries=50, retry_budget_s=5, backoff_base_s=1, backoff_max_s=2
    )
    with pytest.raises(FatalError, match="gave up after"):
        ask(client)
    assert clock.t <= 5 and 3 <= provider.calls <= 8


def test_a_failed_call_is_not_cached_so_the_next_run_asks_again(tmp_path):
    first = make_client(tmp_path, Flaky(), max_retries=0)
    ask(first, "warm-up")
    first.provider.errors = [RetryableError("server error (500)")]
    with pytest.raises(CallFailed):
        ask(first, "q")
    again = make_client(tmp_path, Flaky())
    assert ask(again, "q").cached is False and again.provider.calls == 1


def test_the_failure_fraction_fails_the_run_only_above_its_limit():
    stages = {
        "eval.reader": {"calls": 7, "cache_hits": 1, "failures": 2},
        "eval.judge": {"calls": 10, "unusable": 2},
    }
    summary = summarize(stages)
    assert (summary.requests, summary.failed, summary.unusable) == (20, 2, 2) and summary.fraction == 0.2
    assert check(stages, 0.2) == summary
    with pytest.raises(FatalError, match=r"failed 2, unusable 2 \(20.0%; the limit is 15%"):
        check(stages, 0.15)


# ---------------------------------------------------------------- transport, against a real endpoint
def openai_client(url: str, tmp_path, monkeypatch, **extra) -> LLMClient:
    monkeypatch.setenv("KEME_PROBE_KEY", SECRET)
    config = LLMConfig(
        provider="openai",
        base_url=url,
        model="probe-model",
        api_key_env="KEME_PROBE_KEY",
        cache_dir=str(tmp_path / "cache"),
        timeout_s=1,
        connect_timeout_s=1,
        retry_budget_s=1,
        backoff_base_s=0.05,
        **extra,
    )
    return LLMClient(config)


def test_a_closed_port_is_an_error_at_the_first_attempt(tmp_path, monkeypatch):
    from keme.llm.server import free_port

    client = openai_client(f"http://127.0.0.1:{free_port()}/v1", tmp_path, monkeypatch)
    with pytest.raises(FatalError, match="cannot connect.*is the server running"):
        ask(client)
    assert client.ledger.stages["t"].retries == 0


@pytest.mark.parametrize(
    "mode, message",
    [
        ("garbage", "did not reply as an OpenAI-compatible API"),
        ("401", r"rejected the API key \(401\): check \$KEME_PROBE_KEY"),
    ],
)
def test_a_misconfigured_endpoint_stops_at_the_first_call(tmp_path, monkeypatch, mode, message):
    with Endpoint(mode) as endpoint:
        with pytest.raises(FatalError, match=message):
            ask(openai_client(endpoint.url, tmp_path, monkeypatch))
        assert endpoint.requests == 1


def test_a_request_the_model_cannot_take_fails_alone_and_the_run_goes_on(tmp_path, monkeypatch):
    with Endpoint("too-long") as endpoint:
        client = openai_client(endpoint.url, tmp_path, monkeypatch, max_consecutive_failures=2)
        for _ in range(3):  # neither "never answered" nor "down": the endpoint did answer
            with pytest.raises(CallFailed, match=r"cannot take this request \(400\).*llm.n_ctx"):
                ask(client)
        assert endpoint.requests == 3


def test_an_error_body_echoing_the_authorization_header_never_shows_the_key(tmp_path, monkeypatch):
    with Endpoint("500-echo") as endpoint:
        with pytest.raises(FatalError) as caught:
            ask(openai_client(endpoint.url, tmp_path, monkeypatch, max_retries=1))
    assert "server error (500)" in str(caught.value) and "[redacted]" in str(caught.value)
    assert SECRET not in str(caught.value) and SECRET[3:] not in str(caught.value)


# ---------------------------------------------------------------- the reader and the judge
def test_a_failed_reader_call_raises_instead_of_answering(tmp_path):
    from keme.dataset import Dataset

    item = Dataset.load(ROOT / "data/sample").qa[0]
    client = make_client(tmp_path, Flaky(), max_retries=0)
    ask(client, "warm-up")
    client.provider.errors = [RetryableError("server error (500)")]
    with pytest.raises(CallFailed):
        LLMReader(client).answer(item, "context")


def test_an_unreadable_verdict_is_counted_as_unusable_not_as_wrong(tmp_path):
    from keme.dataset import Dataset

    class Mumbler(Flaky):
        def complete(self, messages, params, schema, timeout=None):
            self.calls += 1
            content = "hmm" if params["seed"] == 1 else '{"label": "CORRECT"}'
            return {"content": content, "prompt_tokens": 3, "completion_tokens": 2, "model": "m"}

    item = Dataset.load(ROOT / "data/sample").qa[0]
    client = make_client(tmp_path, Mumbler())
    verdict = LLMJudge(client, runs=3).judge(item, item.answer)
    assert (
        verdict.correct and verdict.runs == [True, True] and "1 run(s) without a verdict" in verdict.rationale
    )
    assert client.ledger.stages["eval.judge"].unusable == 1


def test_a_judge_with_no_readable_verdict_raises(tmp_path):
    from keme.dataset import Dataset

    class Babbler(Flaky):
        def complete(self, messages, params, schema, timeout=None):
            return {"content": "I think so", "prompt_tokens": 3, "completion_tokens": 2, "model": "m"}

    item = Dataset.load(ROOT / "data/sample").qa[0]
    with pytest.raises(CallFailed, match="gave no verdict"):
        LLMJudge(make_client(tmp_path, Babbler()), runs=2).judge(item, item.answer)


# ---------------------------------------------------------------- an eval run
def eval_settings(tmp_path, client, limit=3) -> Settings:
    from eval.judge import RuleJudge
    from keme.validate import verified_dataset

    return Settings(
        data=verified_dataset(tmp_path / "data"),
        out=tmp_path / "run",
        systems=["bm25"],
        limit=limit,
        reader=LLMReader(client),
        judges=[RuleJudge(), LLMJudge(client, runs=1)],
    )


def test_failed_answers_are_left_out_reported_and_asked_again_on_the_next_run(tmp_path):
    shutil.copytree(ROOT / "data/sample", tmp_path / "data")
    failing = Flaky()
    client = make_client(tmp_path, failing, max_retries=0, max_failure_fraction=0.5)
    original = failing.complete
    asked: list[str] = []

    def one_question_fails(messages, params, schema, timeout=None):
        prompt = messages[0]["content"]
        if schema is None:
            asked.append(prompt)
        if schema is None and len(asked) == 2:
            raise RetryableError("server error (500)")
        return original(messages, params, schema, timeout)

    failing.complete = one_question_fails
    summary = run(eval_settings(tmp_path, client))
    bm25 = summary["systems"]["bm25"]
    assert bm25["answers_missing"] == 1 and bm25["verdicts_missing"] == 0
    assert summary["llm_failures"]["failed"] == 1 and "missing after failed LLM calls" in summary["note"]
    logged = [json.loads(line) for line in (tmp_path / "run/bm25/answer.jsonl").read_text().splitlines()]
    assert len(logged) == 5 and all(r["answer"] == "an answer" for r in logged)

    healthy = make_client(tmp_path, Flaky())
    summary = run(eval_settings(tmp_path, healthy))
    assert summary["systems"]["bm25"]["answers_missing"] == 0
    assert healthy.ledger.stages["eval.reader"].calls == 1  # only the question that failed is asked again


def test_an_eval_run_over_the_failure_limit_stops_before_any_report(tmp_path):
    shutil.copytree(ROOT / "data/sample", tmp_path / "data")
    client = make_client(tmp_path, Flaky(), max_retries=0, max_failure_fraction=0.1)
    ask(client, "warm-up")
    client.provider.errors = [RetryableError("server error (500)")] * 2  # 2 of 11 requests: 18 % > 10 %
    with pytest.raises(FatalError, match="too many LLM calls failed for bm25's answers"):
        run(eval_settings(tmp_path, client))
    assert not (tmp_path / "run/summary.json").exists()

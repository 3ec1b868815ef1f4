"""The LLM client against a real HTTP endpoint on loopback: retries, errors, cache, keys never stored."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from keme.llm import LLMClient, LLMConfig, LLMError
from keme.llm.errors import FatalError

pytest.importorskip("openai")

SECRET = "sk-test-DO-NOT-STORE-1234567890"


class Endpoint(BaseHTTPRequestHandler):
    """Answers the OpenAI chat API; `script` is a list of status codes to return before succeeding."""

    script: list[int] = []
    seen_keys: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        length = int(self.headers["Content-Length"])
        body = json.loads(self.rfile.read(length))
        Endpoint.seen_keys.append(self.headers.get("Authorization", ""))
        status = Endpoint.script.pop(0) if Endpoint.script else 200
        if status != 200:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"error": {"message": f"status {status}", "type": "test"}}).encode())
            return
        reply = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": '{"city": "Lisbon"}'},
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = HTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Endpoint.script, Endpoint.seen_keys = [], []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def client(endpoint, tmp_path, monkeypatch, **extra) -> LLMClient:
    monkeypatch.setenv("KEME_TEST_KEY", SECRET)
    config = LLMConfig(
        provider="openai",
        base_url=endpoint,
        model="test-model",
        api_key_env="KEME_TEST_KEY",
        cache_dir=str(tmp_path / "cache"),
        max_retries=3,
        backoff_base_s=0.01,
        **extra,
    )
    return LLMClient(config, sleep=lambda s: None)


def test_retries_429_and_5xx_then_succeeds(endpoint, tmp_path, monkeypatch):
    Endpoint.script = [429, 503]
    llm = client(endpoint, tmp_path, monkeypatch)
    assert llm.chat([{"role": "user", "content": "city?"}], stage="t").content == '{"city": "Lisbon"}'
    assert llm.ledger.stages["t"].retries == 2 and llm.ledger.stages["t"].calls == 1


def test_backoff_grows_exponentially_with_jitter(endpoint, tmp_path, monkeypatch):
    Endpoint.script = [500, 500, 500]
    sleeps: list[float] = []
    llm = client(endpoint, tmp_path, monkeypatch)
    llm.sleep = sleeps.append
    llm.chat([{"role": "user", "content": "city?"}], stage="t")
    assert len(sleeps) == 3
    for attempt, delay in enumerate(sleeps):
        assert 0.5 * 0.01 * 2**attempt <= delay <= 0.01 * 2**attempt


def test_gives_up_after_the_retry_budget(endpoint, tmp_path, monkeypatch):
    Endpoint.script = [503] * 10
    with pytest.raises(LLMError, match="gave up after 4 attempts"):
        client(endpoint, tmp_path, monkeypatch).chat([{"role": "user", "content": "x"}], stage="t")


@pytest.mark.parametrize(
    "status, advice",
    [(401, "check \\$KEME_TEST_KEY"), (403, "permissions"), (404, "check llm.model and llm.base_url")],
)
def test_auth_and_not_found_are_not_retried_and_say_what_to_fix(
    endpoint, tmp_path, monkeypatch, status, advice
):
    Endpoint.script = [status, 200]
    with pytest.raises(FatalError, match=advice):
        client(endpoint, tmp_path, monkeypatch).chat([{"role": "user", "content": "x"}], stage="t")
    assert len(Endpoint.seen_keys) == 1


def test_a_missing_key_for_a_remote_endpoint_is_explained(monkeypatch, tmp_path):
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    config = LLMConfig(
        provider="openai",
        base_url="https://api.example.com/v1",
        api_key_env="NO_SUCH_KEY",
        cache_dir=str(tmp_path),
    )
    with pytest.raises(FatalError, match="set the environment variable NO_SUCH_KEY"):
        LLMClient(config).chat([{"role": "user", "content": "x"}], stage="t")


def test_structured_output_parses_and_a_warm_cache_makes_zero_calls(endpoint, tmp_path, monkeypatch):
    from pydantic import BaseModel

    class City(BaseModel):
        city: str

    llm = client(endpoint, tmp_path, monkeypatch)
    assert llm.structured([{"role": "user", "content": "city?"}], City, stage="t").city == "Lisbon"
    again = client(endpoint, tmp_path, monkeypatch)
    assert again.structured([{"role": "user", "content": "city?"}], City, stage="t").city == "Lisbon"
    assert len(Endpoint.seen_keys) == 1 and again.ledger.stages["t"].calls == 0


def test_the_api_key_is_sent_but_never_stored(endpoint, tmp_path, monkeypatch):
    llm = client(endpoint, tmp_path, monkeypatch, prices={"test-model": {"prompt_per_mtok": 1.0}})
    llm.chat([{"role": "user", "content": "city?"}], stage="t")
    assert Endpoint.seen_keys == [f"Bearer {SECRET}"]
    stored = [p.read_text() for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert stored and not any(SECRET in text for text in stored)
    assert SECRET not in json.dumps(llm.ledger.as_dict()) and SECRET not in llm.config.model_dump_json()


def test_cost_is_estimated_from_the_price_table(endpoint, tmp_path, monkeypatch):
    llm = client(
        endpoint,
        tmp_path,
        monkeypatch,
        prices={"test-model": {"prompt_per_mtok": 2.0, "completion_per_mtok": 10.0}},
    )
    llm.chat([{"role": "user", "content": "city?"}], stage="t")
    assert llm.ledger.stages["t"].cost_usd == pytest.approx((12 * 2.0 + 5 * 10.0) / 1e6)

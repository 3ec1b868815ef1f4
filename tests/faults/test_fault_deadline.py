"""A timeout is a deadline: an endpoint that drips its reply, stalls after the headers or accepts and never
replies stops `keme eval` (reader, LLM judge), `keme synth --brain llm` and the field systems' client within
a bound the config sets (`llm.deadline_s` per attempt, `llm.budget_s` per call; the systems' deadline_s and
budget_s), with an error naming the endpoint, the limit and the key to raise, and no published number.

The slow endpoint is a loopback HTTP server in a thread of this process; its drip would take minutes, the
deadline is 2 s and the read timeout 30 s, so a command that ends at all (the probe's limit is 60 s) ended
because of the deadline. No timings are asserted beyond that.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from probe import ROOT, raises_clearly, record, refuses

sys.path.insert(0, str(ROOT / "tests"))
from llm_doubles import _content  # noqa: E402

pytestmark = pytest.mark.fault
openai = pytest.importorskip("openai")

KEY_ENV = "KEME_PROBE_KEY"
SLOW = ("drip", "drip-headers", "stall", "silent")
LIMITS = {
    "timeout_s": 30,  # a read: never trips here, each byte comes within a second
    "deadline_s": 2,
    "budget_s": 4,
    "retry_budget_s": 2,
    "max_retries": 1,
    "connect_timeout_s": 2,
    "backoff_base_s": 0.05,
}
DEADLINE = r"no\s+complete\s+reply\s+within\s+the\s+attempt's\s+2s\s+deadline\s+\(llm.deadline_s\)"


def reply(body: dict) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "m"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": _content(body)},
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }
    ).encode()


class SlowEndpoint:
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers slowly the way `mode` says when `slow(body)`.

    drip: headers, then the body a byte a second (padded to minutes); drip-headers: the status line and
    headers a byte a second; stall: headers, then nothing; silent: accepts the request, never writes a byte.
    Other requests (and GET /models, unless `slow_get`) are answered at once.
    """

    def __init__(self, mode: str, slow=lambda body: True, slow_get: bool = False):
        assert mode in SLOW, mode
        self.mode, self.slow, self.slow_get, self.requests = mode, slow, slow_get, 0
        self.release = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - http.server's naming
                models = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}'
                endpoint.answer(self, models) if endpoint.slow_get else self.whole(models)

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if not endpoint.slow(body):
                    self.whole(reply(body))
                    return
                endpoint.requests += 1
                endpoint.answer(self, reply(body) + b" " * 600)

            def whole(self, data: bytes) -> None:
                self.wfile.write(head(len(data)) + data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, handler, data: bytes) -> None:
        if self.mode in ("stall", "silent"):
            if self.mode == "stall":
                handler.wfile.write(head(len(data)))
                handler.wfile.flush()
            self.release.wait(120)
            return
        stream = head(len(data)) + data if self.mode == "drip-headers" else data
        if self.mode == "drip":
            handler.wfile.write(head(len(data)))
        try:
            for byte in stream:
                if self.release.wait(1):
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
        except OSError:
            return  # the client gave up and closed: what a deadline does

    def __enter__(self) -> SlowEndpoint:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def head(length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode()


def llm_file(tmp_path, url: str, **extra) -> str:
    settings = {
        "provider": "openai",
        "base_url": url,
        "model": "probe-model",
        "api_key_env": KEY_ENV,
        "cache_dir": str(tmp_path / "cache"),
    } | LIMITS
    path = tmp_path / "llm.yaml"
    path.write_text(json.dumps(settings | extra))
    return str(path)


def eval_args(tmp_path, url: str, *extra: str, **settings) -> list[str]:
    data = tmp_path / "data"
    if not data.exists():
        shutil.copytree(ROOT / "data/sample", data)
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
        "2",
        "--reader",
        "openai",
        "--llm",
        llm_file(tmp_path, url, **settings),
        *extra,
    ]


def nothing_published(tmp_path) -> None:
    assert not (tmp_path / "run/summary.json").exists() and not (tmp_path / "run/leaderboard.md").exists()


# ---------------------------------------------------------------- our client: keme eval's reader
@pytest.mark.parametrize("mode", SLOW)
def test_eval_reader_against_a_slow_endpoint_stops_at_the_deadline(tmp_path, mode):
    with SlowEndpoint(mode) as endpoint:
        refuses(
            eval_args(tmp_path, endpoint.url),
            match=endpoint.url.replace(".", r"\.") + ".*" + DEADLINE,
            timeout=60,
            env={KEY_ENV: "k"},
        )
        # two questions asked at once (llm.max_in_flight), each call at most max_retries + 1 attempts
        assert endpoint.requests <= 2 * (LIMITS["max_retries"] + 1)
    nothing_published(tmp_path)


# ---------------------------------------------------------------- our client: keme eval's LLM judge
def is_judge(body: dict) -> bool:
    """The judge's requests ask for a verdict (the reader's are answered at once)."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    return schema.get("title") == "Label"


@pytest.mark.parametrize("mode", ("drip", "stall"))
def test_eval_llm_judge_against_a_slow_endpoint_stops_and_publishes_no_score(tmp_path, mode):
    with SlowEndpoint(mode, slow=is_judge) as endpoint:
        refuses(
            eval_args(tmp_path, endpoint.url, "--judge", "llm", "--judge-runs", "1"),
            match=DEADLINE + r".*llm\.budget_s",
            timeout=60,
            env={KEY_ENV: "k"},
        )
        assert endpoint.requests >= 1  # the judge was asked, and did not answer in time
    nothing_published(tmp_path)


# ---------------------------------------------------------------- our client: keme synth --brain llm
def synth_args(tmp_path, url: str) -> list[str]:
    import yaml

    config = yaml.safe_load((ROOT / "tests/fixtures/llm-tiny.yaml").read_text())
    config["llm"] = json.loads(open(llm_file(tmp_path, url)).read())
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return ["keme", "synth", "--config", str(path), "--out", str(tmp_path / "d"), "--brain", "llm"]


@pytest.mark.parametrize("mode", ("drip", "silent"))
def test_synth_with_the_llm_brain_against_a_slow_endpoint_stops_at_the_deadline(tmp_path, mode):
    with SlowEndpoint(mode) as endpoint:
        refuses(synth_args(tmp_path, endpoint.url), match=DEADLINE, timeout=60, env={KEY_ENV: "k"})
    assert not (tmp_path / "d/manifest.json").exists()


def test_a_budget_shorter_than_one_attempt_is_refused_naming_both_keys(tmp_path):
    refuses(
        eval_args(tmp_path, "http://127.0.0.1:9/v1", deadline_s=10, budget_s=5),
        match=r"llm\.budget_s \(5 s\) is shorter than one attempt's llm\.deadline_s \(10 s\)",
        timeout=60,
        env={KEY_ENV: "k"},
    )


# ---------------------------------------------------------------- the field systems' client
field_llm = pytest.importorskip("baselines.field_llm")


def field_chat(endpoint) -> None:
    """One chat completion as mem0 and LangMem send it: the openai SDK with the endpoint's client."""
    client = openai.OpenAI(
        base_url=endpoint.base_url,
        api_key="no-key",
        max_retries=endpoint.max_retries,
        timeout=endpoint.deadline_s,
        http_client=endpoint.http_client(None, field_llm.Replies()),
    )
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("mode", SLOW)
def test_field_client_against_a_slow_endpoint_stops_within_its_budget(mode):
    with SlowEndpoint(mode) as server:
        endpoint = field_llm.Endpoint(
            server.url, "m", "no-key", local=False, deadline_s=1, budget_s=2.5, max_retries=5
        )

        def call():
            try:
                field_chat(endpoint)
            except openai.APIError as exc:
                known = field_llm.explain("mem0", endpoint, exc)
                raise known or exc

        raises_clearly(call, field_llm.KemeError, match=r"no complete reply in .*\(deadline_s\).*budget_s")
        # the budget, not max_retries, ended it: 2.5 s hold at most 3 one-second attempts
        assert 1 <= server.requests <= 3


def test_field_endpoint_probe_that_drips_its_models_list_is_an_error():
    with SlowEndpoint("drip-headers", slow_get=True) as server:
        raises_clearly(
            lambda: field_llm.open_endpoint("langmem", server.url, "m", None, None),
            field_llm.KemeError,
            match=r"no complete answer to GET /models within 10 s",
        )


@pytest.mark.parametrize(
    "limits",
    [{"deadline_s": 0}, {"budget_s": -1}, {"deadline_s": 10, "budget_s": 5}, {"max_retries": -1}],
)
def test_field_systems_refuse_limits_that_cannot_bound_a_call(limits):
    mem0 = pytest.importorskip("baselines.mem0")
    raises_clearly(lambda: mem0.Mem0(**limits), ValueError, match=r"deadline_s|budget_s")


def test_field_defaults_bound_an_attempt_below_the_sdks_600_s():
    ok = field_llm.DEADLINE_S < 600 and field_llm.DEADLINE_S <= field_llm.BUDGET_S
    record("ok" if ok else "silent")
    assert ok

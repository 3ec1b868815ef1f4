"""Any frame, one Memory Bank MCP server: every request answered under its id, the server alive after each.

Hypothesis writes the frames: random JSON values, request-shaped objects with wrong types in every
member (ids of every JSON type), random bytes, integers and floats too large to hold, deep nesting,
batches. After each frame a `tools/list` is sent; the frame's replies are read up to that one's and
checked against what JSON-RPC 2.0 (and MCP) owe it:

- not JSON (or not UTF-8): one -32700 error;
- a request (`method` and an `id` that is a string or a number): one reply with that id;
- a notification (`method` a string, no `id`) or a response (`result`/`error` with an `id`): none;
- anything else: one error, with the id when it is a string or a number, else null;
- a batch: one array holding a reply per element owed one (none at all if no element is owed one).

One outcome per test is recorded: clear (its frames are all bad input, all refused as owed) or ok
(mixed frames, all served as owed), or the class of its first failure (no reply: hang, a dead
server: crash, a wrong or missing reply: silent).
"""

from __future__ import annotations

import functools
import json
import os
import select
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from probe import ROOT, record

pytestmark = pytest.mark.fault
pytest.importorskip("mcp")

REPLY_SECONDS = 20
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class Outcome(Exception):
    """A probe's failure, by the fault suite's class (hang, crash, silent)."""

    def __init__(self, outcome: str, detail: str):
        super().__init__(f"{outcome}: {detail}")
        self.outcome = outcome


class Server:
    """The server in a child process, stderr in a file (nothing can block on it)."""

    def __init__(self, folder: Path):
        self.log = (folder / "stderr.txt").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "baselines.memory_bank.mcp_server", "--db", str(folder / "bank.sqlite")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
        self.buffer = b""
        self.sentinels = 0
        self.send(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"frames","version":"1"}}}'
        )
        assert "result" in self.line(), self.stderr()
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, raw: bytes) -> None:
        try:
            self.process.stdin.write(raw + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError as exc:
            raise Outcome("crash", f"the server is gone: {self.stderr()}") from exc

    def line(self) -> Any:
        deadline = time.monotonic() + REPLY_SECONDS
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise Outcome("hang", "no reply in time")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise Outcome("crash", f"the server closed its output: {self.stderr()}")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line, parse_float=Decimal, parse_int=Decimal)
        except ValueError as exc:
            raise Outcome("silent", f"a reply that is not JSON: {line[:300]!r}") from exc

    def exchange(self, frame: bytes) -> list[Any]:
        """The frame's replies: every line up to the sentinel `tools/list`'s reply (read after it too,
        until `expected` of them came, since requests are handled concurrently)."""
        self.sentinels += 1
        sentinel = f"sentinel-{self.sentinels}"
        self.send(frame)
        self.send(json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "tools/list"}).encode())
        replies, seen = [], False
        while not seen:
            reply = self.line()
            if isinstance(reply, dict) and reply.get("id") == sentinel:
                if "tools" not in reply.get("result", {}):
                    raise Outcome("silent", f"tools/list after the frame failed: {reply}")
                seen = True
            else:
                replies.append(reply)
        return replies

    def more(self) -> Any:
        return self.line()

    def stderr(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-2000:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """A server for the module, started again if a probe killed it (that probe is a crash)."""
    started: list[Server] = []

    def current() -> Server:
        if not started or started[-1].process.poll() is not None:
            started.append(Server(tmp_path_factory.mktemp("server")))
        return started[-1]

    yield current
    for server in started:
        server.close()


# ---------------------------------------------------------------- what each frame is owed
def _number(value: Any) -> bool:
    return isinstance(value, Decimal)


def _echoable(value: Any) -> bool:
    return isinstance(value, str) or _number(value)


def owed(message: Any) -> tuple[bool, Any]:
    """(whether a reply is owed, the id it must carry) for one parsed message."""
    if not isinstance(message, dict):
        return True, None
    echo = message.get("id") if _echoable(message.get("id")) else None
    if message.get("jsonrpc") != "2.0":
        return True, echo
    if "method" not in message:
        if ("result" in message or "error" in message) and "id" in message:
            return False, None
        return True, echo
    params = message.get("params")
    if "id" not in message:
        if isinstance(message["method"], str) and (params is None or isinstance(params, dict | list)):
            return False, None
        return True, None
    return True, echo


def _parse(frame: bytes) -> tuple[bool, Any]:
    """(parsed, value) as strict JSON; numbers as Decimal, so none is too large."""

    def reject(name: str) -> None:
        raise ValueError(name)

    try:
        return True, json.loads(
            frame.decode("utf-8"), parse_float=Decimal, parse_int=Decimal, parse_constant=reject
        )
    except (ValueError, RecursionError):
        return False, None


def _same_id(got: Any, expected: Any) -> bool:
    return type(got) is type(expected) and got == expected


def _check_reply(reply: Any, expected_id: Any) -> None:
    if (
        not isinstance(reply, dict)
        or reply.get("jsonrpc") != "2.0"
        or ("result" in reply) == ("error" in reply)
    ):
        raise Outcome("silent", f"not a JSON-RPC reply: {str(reply)[:300]}")
    if not _same_id(reply.get("id"), expected_id):
        raise Outcome("silent", f"reply id {reply.get('id')!r}, expected {expected_id!r}")


def probe(servers, frame: bytes) -> None:
    """Send `frame`, check its replies against what it is owed; raise Outcome on a failure."""
    server = servers()
    replies = server.exchange(frame)
    parsed, value = _parse(frame)
    if not parsed:
        expected: list = [("error", -32700)]
    elif isinstance(value, list) and value:
        ids = [echo for due, echo in map(owed, value) if due]
        expected = [("batch", ids)] if ids else []
    elif isinstance(value, list):
        expected = [("one", None)]
    else:
        due, echo = owed(value)
        expected = [("one", echo)] if due else []
    while len(replies) < len(expected):
        replies.append(server.more())
    if len(replies) != len(expected):
        raise Outcome("silent", f"{len(replies)} replies, {len(expected)} owed: {str(replies)[:300]}")
    for reply, (kind, detail) in zip(replies, expected):
        if kind == "error":
            if not isinstance(reply, dict) or reply.get("error", {}).get("code") != -32700:
                raise Outcome("silent", f"not a parse error: {str(reply)[:300]}")
        elif kind == "one":
            _check_reply(reply, detail)
        else:
            if not isinstance(reply, list) or len(reply) != len(detail):
                raise Outcome("silent", f"a batch owed {len(detail)} replies got {str(reply)[:300]}")
            got = sorted((repr(r.get("id")) for r in reply if isinstance(r, dict)))
            if got != sorted(repr(i) for i in detail):
                raise Outcome("silent", f"batch reply ids {got}, expected {detail}")
            for element in reply:
                _check_reply(element, element.get("id"))
    if server.process.poll() is not None:
        raise Outcome("crash", server.stderr())


def probing(success: str):
    """Record one outcome for a hypothesis test: `success` (clear where every frame is bad input,
    ok where the frames are mixed), or the class of its first failure."""

    def decorate(test):
        @functools.wraps(test)
        def wrapper(*args, **kwargs):
            try:
                test(*args, **kwargs)
            except Outcome as exc:
                record(exc.outcome)
                raise AssertionError(str(exc)) from exc
            record(success)

        return wrapper

    return decorate


# ---------------------------------------------------------------- frames
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
ids = st.one_of(
    st.integers(),
    st.text(max_size=10),
    st.floats(allow_nan=False, allow_infinity=False),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
methods = (
    st.sampled_from(
        [
            "ping",
            "tools/list",
            "tools/call",
            "resources/list",
            "prompts/list",
            "initialize",
            "nope/x",
            "notifications/x",
        ]
    )
    | json_values
)
tool_calls = st.fixed_dictionaries(
    {"name": st.sampled_from(["search_memory", "save_memory", "delete_memory", "missing"]) | json_values},
    optional={
        "arguments": st.dictionaries(
            st.sampled_from(["query", "limit", "title", "content", "id", "keywords"]), json_values, max_size=4
        )
        | json_values
    },
)
params = st.one_of(tool_calls, st.dictionaries(st.text(max_size=6), json_values, max_size=3), json_values)


@st.composite
def messages(draw) -> dict:
    """Request-shaped objects, each member sometimes missing or of a wrong type."""
    message = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = "2.0" if draw(st.integers(0, 5)) else draw(json_values)
    if draw(st.integers(0, 9)):
        message["method"] = draw(methods)
    if draw(st.integers(0, 4)):
        message["id"] = draw(ids)
    if draw(st.booleans()):
        message["params"] = draw(params)
    if not draw(st.integers(0, 9)):
        message[draw(st.sampled_from(["result", "error"]))] = draw(json_values)
    return message


def encode(value: Any, ascii_only: bool) -> bytes:
    """JSON text; with ascii_only off, a lone surrogate goes out as bytes that are not UTF-8."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@probing("ok")
@SETTINGS
@given(value=json_values, ascii_only=st.booleans())
def test_any_json_value_as_a_frame(servers, value, ascii_only):
    probe(servers, encode(value, ascii_only))


@probing("ok")
@settings(SETTINGS, max_examples=120)
@given(message=messages(), ascii_only=st.booleans())
def test_request_shaped_frames_with_wrong_types_anywhere(servers, message, ascii_only):
    probe(servers, encode(message, ascii_only))


@probing("ok")
@settings(SETTINGS, max_examples=40)
@given(batch=st.lists(messages(), max_size=5))
def test_batches(servers, batch):
    probe(servers, encode(batch, True))


@probing("clear")
@SETTINGS
@given(raw=st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ")))
def test_random_bytes(servers, raw):
    if raw.strip():  # a blank line is no frame
        probe(servers, raw)


@probing("clear")
@settings(SETTINGS, max_examples=25)
@given(
    digits=st.integers(4301, 9000),
    sign=st.sampled_from(["", "-"]),
    exponent=st.sampled_from(["", ".5", "e5", "e400", ".0e-400"]),
    where=st.sampled_from(["id", "limit", "title", "top", "method", "key", "batch"]),
)
def test_numbers_too_large_to_hold(servers, digits, sign, exponent, where):
    number = sign + "9" * digits + exponent
    templates = {
        "id": '{"jsonrpc":"2.0","id":%s,"method":"tools/list"}',
        "limit": '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_memory",'
        '"arguments":{"query":"x","limit":%s}}}',
        "title": '{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"save_memory",'
        '"arguments":{"title":%s,"content":"c"}}}',
        "top": "%s",
        "method": '{"jsonrpc":"2.0","id":2,"method":%s}',
        "key": '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"n":[%s]}}}',
        "batch": '[{"jsonrpc":"2.0","id":%s,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]',
    }
    probe(servers, (templates[where] % number).encode())


@probing("clear")
@settings(SETTINGS, max_examples=15)
@given(
    depth=st.sampled_from([65, 100, 500, 900, 2000, 20_000, 200_000]),
    opener=st.sampled_from(["[", '{"a":']),
    where=st.sampled_from(["params", "id", "top", "extra"]),
)
def test_deep_nesting(servers, depth, opener, where):
    closer = "]" if opener == "[" else "}"
    deep = opener * depth + "1" + closer * depth
    templates = {
        "params": '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":%s}}',
        "id": '{"jsonrpc":"2.0","id":%s,"method":"ping"}',
        "top": "%s",
        "extra": '{"jsonrpc":"2.0","id":"e","method":"tools/list","extra":%s}',
    }
    probe(servers, (templates[where] % deep).encode())


def test_the_server_survives_a_frame_of_every_kind_in_a_row(servers):
    """The examples above, in one stream without a restart: the last request is still answered."""
    frames = [
        b"{nope",
        b'{"jsonrpc":"2.0","id":' + b"1" * 5000 + b',"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        b"[" * 100_000,
        b"\xff\xfe",
        b'[{"jsonrpc":"2.0","id":"b","method":"ping"}]',
    ]
    try:
        for frame in frames:
            probe(servers, frame)
    except Outcome as exc:
        record(exc.outcome)
        raise AssertionError(str(exc)) from exc
    record("ok")


def test_requests_in_flight_when_stdin_closes_are_all_answered(tmp_path):
    """Fifty saves written back to back, then EOF at once: fifty replies, then a clean exit."""
    server = Server(tmp_path)
    burst = b"".join(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": "save_memory", "arguments": {"title": f"t{number}", "content": "c"}},
            }
        ).encode()
        + b"\n"
        for number in range(50)
    )
    try:
        out, _ = server.process.communicate(burst, timeout=120)  # written at once, then EOF
    except subprocess.TimeoutExpired:
        server.process.kill()
        record("hang")
        raise
    finally:
        server.log.close()
    answered = sorted(json.loads(line)["id"] for line in (server.buffer + out).splitlines() if line.strip())
    saved = all("result" in json.loads(line) for line in (server.buffer + out).splitlines() if line.strip())
    outcome = "ok" if answered == list(range(50)) and saved and server.process.returncode == 0 else "silent"
    record(outcome)
    assert outcome == "ok", (answered, server.process.returncode)


def test_a_frame_over_the_size_limit_gets_invalid_request_and_the_next_is_served(servers):
    """A 17 MiB line (the limit is 16 MiB) is skipped whole, not buffered without end."""
    server = servers()
    try:
        replies = server.exchange(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":"' + b"x" * (17 << 20) + b'"}}'
        )
    except Outcome as exc:
        record(exc.outcome)
        raise AssertionError(str(exc)) from exc
    ok = [(r.get("id"), r.get("error", {}).get("code")) for r in replies] == [(None, Decimal(-32600))]
    record("clear" if ok else "silent")
    assert ok, replies

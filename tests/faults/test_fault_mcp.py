"""The Memory Bank MCP server answers every frame: bad JSON, bad bytes, lone surrogates, unusable storage.

Each probe drives `python -m baselines.memory_bank.mcp_server` over stdio with raw frames
(initialize first, then the bad frame) and reads the reply with a timeout: no reply is a hang,
a success where an error was due is silent, a dead server is a crash.
"""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from probe import ROOT, record

pytestmark = pytest.mark.fault
pytest.importorskip("mcp")

REPLY_SECONDS = 20


class Server:
    """The MCP server in a child process, spoken to one raw line at a time."""

    def __init__(self, db: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "baselines.memory_bank.mcp_server", "--db", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
        self.buffer = b""
        self.next_id = 100

    def send(self, frame: bytes | dict) -> None:
        raw = json.dumps(frame).encode() if isinstance(frame, dict) else frame
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = REPLY_SECONDS) -> dict | None:
        """The next reply line, or None if none came in time."""
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def initialize(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "fault-probe", "version": "1"},
                },
            }
        )
        assert "result" in (self.reply() or {}), self.stderr()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict) -> dict | None:
        self.next_id += 1
        self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        return self.reply()

    def stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        return self.process.stderr.read().decode(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def server(tmp_path):
    started = Server(tmp_path / "bank.sqlite")
    started.initialize()
    yield started
    started.close()


def classify(
    server: Server,
    reply: dict | None,
    *,
    error_code: int | None = None,
    tool_error: bool = False,
    request_id: object = "any",
) -> dict:
    """Record the probe's outcome: the reply must be the expected error and the server must still be alive."""
    if reply is None:
        outcome = "crash" if server.process.poll() is not None else "hang"
    elif error_code is not None:
        outcome = "clear" if reply.get("error", {}).get("code") == error_code else "silent"
    else:
        outcome = "clear" if reply.get("result", {}).get("isError") is tool_error is True else "silent"
    if outcome == "clear" and request_id != "any" and reply.get("id") != request_id:
        outcome = "silent"
    if outcome == "clear" and server.call("search_memory", {"query": "still there"}) is None:
        outcome = "crash"  # the server must keep serving after a bad frame
    record(outcome)
    assert outcome == "clear", f"{outcome}: {reply}\n{server.stderr()}"
    return reply


def test_malformed_json_gets_a_parse_error(server):
    server.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", nope')
    reply = classify(server, server.reply(), error_code=-32700, request_id=None)
    assert "malformed JSON" in reply["error"]["message"]


def test_a_truncated_frame_gets_a_parse_error(server):
    server.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/ca')
    classify(server, server.reply(), error_code=-32700)


def test_a_lone_surrogate_in_the_arguments_gets_invalid_params_with_its_id(server):
    server.send(
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"save_memory",'
        b'"arguments":{"title":"\\ud800","content":"x"}}}'
    )
    reply = classify(server, server.reply(), error_code=-32602, request_id=2)
    assert "params.arguments.title" in reply["error"]["message"]
    # not saved
    assert server.call("search_memory", {"query": "x"})["result"]["structuredContent"]["result"] == []


def test_a_lone_low_surrogate_in_a_query_gets_invalid_params(server):
    server.send(
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_memory",'
        b'"arguments":{"query":"latte \\udc00"}}}'
    )
    classify(server, server.reply(), error_code=-32602, request_id=3)


def test_a_lone_surrogate_in_the_method_gets_invalid_request(server):
    server.send(b'{"jsonrpc":"2.0","id":4,"method":"tools/\\ud83d"}')
    classify(server, server.reply(), error_code=-32600, request_id=4)


def test_a_surrogate_encoded_as_bytes_gets_a_parse_error_with_its_id(server):
    server.send(
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_memory",'
        b'"arguments":{"query":"\xed\xa0\x80"}}}'
    )
    classify(server, server.reply(), error_code=-32700, request_id=5)


def test_bytes_that_are_not_utf8_get_a_parse_error(server):
    server.send(
        b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search_memory",'
        b'"arguments":{"query":"\xff\xfe"}}}'
    )
    classify(server, server.reply(), error_code=-32700, request_id=6)


def test_json_that_is_not_a_jsonrpc_message_gets_invalid_request(server):
    server.send(b'{"id": 7, "method": 12}')
    classify(server, server.reply(), error_code=-32600, request_id=7)


def test_a_batch_of_non_messages_gets_an_invalid_request_per_element(server):
    server.send(b"[1, 2, 3]")  # a JSON-RPC batch (MCP 2025-03-26 requires receiving them)
    reply = server.reply()
    ok = isinstance(reply, list) and [(r["id"], r["error"]["code"]) for r in reply] == [(None, -32600)] * 3
    outcome = "clear" if ok else ("hang" if reply is None else "silent")
    record(outcome)
    assert ok, reply


def test_deeply_nested_json_gets_a_parse_error(server):
    server.send(
        b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    )
    classify(server, server.reply(), error_code=-32700)


def test_an_unusable_db_makes_save_a_tool_error_naming_it(tmp_path):
    (tmp_path / "a-directory").mkdir()
    server = Server(tmp_path / "a-directory")
    try:
        server.initialize()
        reply = classify(server, server.call("save_memory", {"title": "t", "content": "c"}), tool_error=True)
        text = reply["result"]["content"][0]["text"]
        assert "a-directory" in text and "nothing was saved" in text
    finally:
        server.close()


def test_an_unusable_db_makes_search_a_tool_error_too(tmp_path):
    (tmp_path / "a-directory").mkdir()
    server = Server(tmp_path / "a-directory")
    try:
        server.initialize()
        classify(server, server.call("search_memory", {"query": "latte"}), tool_error=True)
    finally:
        server.close()


def test_a_write_that_fails_after_opening_is_a_tool_error_and_nothing_is_kept(tmp_path):
    db = tmp_path / "bank.sqlite"
    server = Server(db)
    try:
        server.initialize()
        assert server.call("save_memory", {"title": "kept", "content": "first"})["result"]["isError"] is False
        with sqlite3.connect(db) as other:  # the file is damaged under the running server
            other.execute("DROP TABLE semantic")
        reply = classify(
            server, server.call("save_memory", {"title": "lost", "content": "second"}), tool_error=True
        )
        assert "bank.sqlite" in reply["result"]["content"][0]["text"]
    finally:
        server.close()


def test_good_requests_still_work_between_bad_frames(server):
    server.send(b"not json at all")
    assert server.reply()["error"]["code"] == -32700
    saved = server.call("save_memory", {"title": "Douyin search entry", "content": "magnifying glass"})
    found = server.call("search_memory", {"query": "douyin"})
    ok = (
        saved["result"]["isError"] is False
        and found["result"]["structuredContent"]["result"][0]["id"]
        == saved["result"]["structuredContent"]["id"]
    )
    record("ok" if ok else "silent")
    assert ok

"""The Memory Bank MCP server's wire: how each frame is judged (frames.py) and how replies find their
requests (stdio.Wire), without a process."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402

from baselines.memory_bank import frames  # noqa: E402
from baselines.memory_bank.stdio import Wire  # noqa: E402


def result(request_id: int, value: dict) -> types.JSONRPCResponse:
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=value)


def sent_id(message) -> int:
    return message.message.id


# ---------------------------------------------------------------- frames
def test_a_lone_surrogate_in_params_is_invalid_params_naming_where():
    frame = frames.read(
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"tags":["ok","\\udfff"]}}}'
    )
    assert frame.id == "9" and frame.code == -32602 and "params.arguments.tags[1]" in frame.message


def test_a_valid_request_becomes_a_request_with_its_id_as_json_text():
    frame = frames.read(b'{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}')
    assert frame == frames.Request(id='"a-1"', method="tools/list", params=None)


def test_a_surrogate_pair_is_not_a_problem():
    assert frames.problem({"q": "\U0001f600 latte"}) is None


@pytest.mark.parametrize("raw, text", [(b"1.5", "1.5"), (b"-7", "-7"), (b"2.0", "2.0"), (b"1e400", "1e400")])
def test_any_number_is_a_usable_id(raw, text):
    frame = frames.read(b'{"jsonrpc":"2.0","id":' + raw + b',"method":"ping"}')
    assert isinstance(frame, frames.Request) and frame.id == text


@pytest.mark.parametrize("raw", [b"true", b"null", b"[1]", b'{"a":1}'])
def test_an_id_that_is_not_a_string_or_number_is_invalid_with_id_null(raw):
    frame = frames.read(b'{"jsonrpc":"2.0","id":' + raw + b',"method":"ping"}')
    assert (frame.code, frame.id) == (-32600, "null")


def test_an_integer_of_five_thousand_digits_in_params_is_invalid_params():
    frame = frames.read(
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"limit":' + b"9" * 5000 + b"}}"
    )
    assert (frame.code, frame.id) == (-32602, "3") and "params.limit" in frame.message


def test_an_integer_id_of_five_thousand_digits_is_kept_verbatim():
    frame = frames.read(b'{"jsonrpc":"2.0","id":' + b"7" * 5000 + b',"method":"ping"}')
    assert frame.id == "7" * 5000


def test_nan_is_a_parse_error():
    frame = frames.read(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}')
    assert (frame.code, frame.id) == (-32700, "null")


def test_nesting_deeper_than_the_limit_is_invalid_params():
    deep = b"[" * 200 + b"]" * 200
    frame = frames.read(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + deep + b"}}")
    assert (frame.code, frame.id) == (-32602, "1")


def test_params_that_are_not_an_object_are_invalid_params():
    frame = frames.read(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}')
    assert (frame.code, frame.id) == (-32602, "1")


def test_a_notification_with_unusable_params_is_dropped_without_a_reply():
    frame = frames.read(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    assert isinstance(frame, frames.Dropped)


def test_an_object_without_method_or_result_is_invalid_with_its_id():
    frame = frames.read(b'{"jsonrpc":"2.0","id":4}')
    assert (frame.code, frame.id) == (-32600, "4")


def test_an_empty_batch_is_one_invalid_request():
    frame = frames.read(b"[]")
    assert (frame.code, frame.id) == (-32600, "null")


# ---------------------------------------------------------------- wire
def test_a_reply_goes_back_with_the_clients_float_id():
    wire = Wire()
    (message,), _ = wire.inbound(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    line = wire.outbound(result(sent_id(message), {}))
    assert json.loads(line) == {"jsonrpc": "2.0", "id": 1.5, "result": {}}


def test_a_huge_integer_id_is_echoed_digit_for_digit():
    wire = Wire()
    digits = b"8" * 5000
    (message,), _ = wire.inbound(b'{"jsonrpc":"2.0","id":' + digits + b',"method":"ping"}')
    assert (
        wire.outbound(result(sent_id(message), {})) == b'{"jsonrpc":"2.0","id":' + digits + b',"result":{}}\n'
    )


def test_two_requests_in_flight_under_one_id_both_get_their_reply():
    wire = Wire()
    (first,), _ = wire.inbound(b'{"jsonrpc":"2.0","id":"x","method":"ping"}')
    (second,), _ = wire.inbound(b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}')
    replies = [wire.outbound(result(sent_id(m), {"n": n})) for n, m in ((2, second), (1, first))]
    assert [json.loads(r) for r in replies] == [
        {"jsonrpc": "2.0", "id": "x", "result": {"n": 2}},
        {"jsonrpc": "2.0", "id": "x", "result": {"n": 1}},
    ]


def test_a_batch_is_answered_by_one_array_once_every_request_is_done():
    wire = Wire()
    messages, now = wire.inbound(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},'
        b'{"jsonrpc":"2.0","id":true,"method":"ping"},{"jsonrpc":"2.0","id":"b","method":"ping"}]'
    )
    assert now == [] and len(messages) == 3  # two requests and the notification
    requests = [m for m in messages if isinstance(m.message, types.JSONRPCRequest)]
    assert wire.outbound(result(sent_id(requests[1]), {})) is None  # held for the rest of its batch
    batch = json.loads(wire.outbound(result(sent_id(requests[0]), {})))
    assert [(r["id"], "error" in r) for r in batch] == [(None, True), ("b", False), (1, False)]


def test_a_batch_of_notifications_gets_no_reply():
    wire = Wire()
    messages, now = wire.inbound(b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]')
    assert len(messages) == 1 and now == []


def test_a_cancel_names_the_servers_id_and_the_cancelled_request_is_not_owed_a_reply():
    wire = Wire()
    (request,), _ = wire.inbound(b'{"jsonrpc":"2.0","id":"slow","method":"ping"}')
    (cancel,), _ = wire.inbound(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}'
    )
    assert cancel.message.params["requestId"] == sent_id(request) and wire.pending == {}
    assert wire.outbound(result(sent_id(request), {})) is None


def test_requests_left_when_the_server_stops_get_an_internal_error():
    wire = Wire()
    wire.inbound(b'{"jsonrpc":"2.0","id":5,"method":"ping"}')
    (line,) = wire.abandon("stopped")
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32603, "message": "Internal error: stopped"},
    }

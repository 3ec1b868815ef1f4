"""One line off the wire, judged as JSON-RPC 2.0 before the MCP SDK sees it.

The SDK drops what it cannot read (no reply: the client waits forever), and it accepts only
integer and string ids, reading a request with any other id as a notification (no reply either).
So every frame is decoded (strict UTF-8), parsed (strict JSON: no NaN or Infinity; an integer
beyond Python's 4,300-digit limit or a float beyond ±1.8e308 is kept as its text, `RawNumber`,
rather than raising) and classified here:

- a request (`method` and `id`): its id may be any string or number, as JSON-RPC allows; it is
  kept as JSON text to echo verbatim, and the SDK gets an id of the server's own. An id that is
  null (MCP forbids it), a boolean, an array or an object is an invalid request, answered with
  id null;
- a notification (`method` a string, no `id`, `params` absent, an object or an array): never
  answered, even when unusable (then logged);
- a response to a request of the server's (`result` or `error`, no `method`): passed on, never
  answered;
- anything else gets the error JSON-RPC names for it: -32700 parse error (not UTF-8, not JSON,
  nested too deeply), -32600 invalid request (not a request object; a lone surrogate, a number
  too large or nesting deeper than `MAX_DEPTH` outside `params`), -32602 invalid params (the
  same inside `params`, or `params` that is not an object, which every MCP method takes).

A batch (a JSON array) is split into its elements, each judged alone: MCP 2025-03-26, which this
server still negotiates, requires receiving batches (later revisions dropped them).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from pydantic import ValidationError

MAX_DEPTH = 64  # arrays and objects inside one another; every MCP message this server takes has < 10
NULL = "null"
SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class RawNumber:
    """A JSON number Python cannot hold as sent (an integer over 4,300 digits, a float beyond
    ±1.8e308): its text, to name it in an error or echo it as an id."""

    text: str


@dataclass
class Refusal:
    """The error reply a frame gets; `id` is the JSON text of the id to echo ("null" when unknown)."""

    code: int
    message: str
    id: str = NULL

    def line(self) -> str:
        error = json.dumps({"code": self.code, "message": self.message})  # ASCII: any text encodes
        return '{"jsonrpc":"2.0","id":' + self.id + ',"error":' + error + "}"


@dataclass
class Request:
    """A request for the server: `id` is the client's id as JSON text, to echo in the reply."""

    id: str
    method: str
    params: dict[str, Any] | None


@dataclass
class Passed:
    """A notification or a response, handed to the server as it is (it never gets a reply)."""

    message: types.JSONRPCMessage


@dataclass
class Dropped:
    """A notification the server cannot use: no reply is allowed, so it is only logged."""

    reason: str


@dataclass
class Batch:
    elements: list[Refusal | Request | Passed | Dropped] = field(default_factory=list)


Frame = Refusal | Request | Passed | Dropped | Batch


def _int(text: str) -> int | RawNumber:
    return int(text) if len(text.lstrip("-")) <= 4300 else RawNumber(text)


def _float(text: str) -> float | RawNumber:
    value = float(text)
    return value if math.isfinite(value) else RawNumber(text)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str) -> Any:
    """Strict JSON; numbers Python cannot hold become `RawNumber`."""
    return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)


def id_text(value: Any) -> str | None:
    """The JSON text of a usable request id (any string or number), or None for another type."""
    if isinstance(value, RawNumber):
        return value.text
    if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)):
        return json.dumps(value)  # ASCII escapes: a lone surrogate in an id echoes as sent
    return None


def problem(value: Any, where: str = "") -> tuple[str, str] | None:
    """(path, what is wrong) for the first value the server cannot take: a string or key holding
    an unpaired UTF-16 surrogate, a `RawNumber`, or nesting deeper than `MAX_DEPTH`. Iterative, so
    no nesting the parser accepted can exhaust the stack here."""
    stack = [(value, where or "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path, f"nests more than {MAX_DEPTH} arrays or objects deep"
        if isinstance(item, str):
            if SURROGATE.search(item):
                return path, (
                    "holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not a Unicode "
                    "character; send valid UTF-16 pairs"
                )
        elif isinstance(item, RawNumber):
            shown = item.text if len(item.text) <= 24 else f"{item.text[:12]}…({len(item.text)} characters)"
            return path, (
                f"is a number too large to hold ({shown}): integers up to 4,300 digits, floats up to ±1.8e308"
            )
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                child_path = f"{path}.{key}" if path != "$" else str(key)
                if SURROGATE.search(key):
                    return child_path, "is a key holding a lone surrogate, which is not a Unicode character"
                stack.append((child, child_path, depth + 1))
        elif isinstance(item, list):
            for number in range(len(item) - 1, -1, -1):
                stack.append((item[number], f"{path}[{number}]", depth + 1))
    return None


def _salvage_id(line: bytes) -> str:
    """The id of a frame that is JSON apart from its bad bytes, so its client is not left waiting."""
    try:
        data = loads(line.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return NULL
    return (id_text(data.get("id")) or NULL) if isinstance(data, dict) else NULL


def judge(data: Any) -> Refusal | Request | Passed | Dropped:
    """One parsed message (not a batch): what the server does with it."""
    if not isinstance(data, dict):
        return Refusal(
            types.INVALID_REQUEST, f"Invalid request: a JSON-RPC message is an object, not {_kind(data)}"
        )
    has_id = "id" in data
    echo = id_text(data.get("id")) if has_id else None
    reply_id = echo or NULL
    if data.get("jsonrpc") != "2.0":
        return Refusal(types.INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', reply_id)
    if "method" not in data:
        if ("result" in data or "error" in data) and has_id:
            return _response(data)
        return Refusal(
            types.INVALID_REQUEST, 'Invalid request: neither a request ("method") nor a response', reply_id
        )
    method, params = data["method"], data.get("params")
    if not isinstance(method, str):
        return Refusal(
            types.INVALID_REQUEST,
            f'Invalid request: "method" must be a string, not {_kind(method)}',
            reply_id,
        )
    if params is not None and not isinstance(params, dict | list):
        return Refusal(
            types.INVALID_REQUEST,
            f'Invalid request: "params" must be an object or an array, not {_kind(params)}',
            reply_id,
        )
    if has_id and echo is None:
        return Refusal(
            types.INVALID_REQUEST,
            f"Invalid request: an id must be a string or a number, not {_kind(data['id'])}",
        )
    if isinstance(params, list):
        return _refuse(
            has_id, types.INVALID_PARAMS, '"params" must be an object (every MCP method takes one)', reply_id
        )
    found = problem({k: v for k, v in data.items() if k != "id"})
    if found is not None:
        where, what = found
        where = where if len(where) <= 200 else where[:200] + "…"
        code = types.INVALID_PARAMS if where.startswith("params") else types.INVALID_REQUEST
        return _refuse(has_id, code, f"{where} {what}", reply_id)
    if not has_id:
        return _notification(data)
    return Request(reply_id, method, params)


def _refuse(request: bool, code: int, detail: str, reply_id: str) -> Refusal | Dropped:
    """A request's error, or for a notification (which must never get a reply) a logged drop."""
    label = "Invalid params" if code == types.INVALID_PARAMS else "Invalid request"
    if not request:
        return Dropped(f"a notification dropped: {detail}")
    return Refusal(code, f"{label}: {detail}", reply_id)


def _notification(data: dict) -> Passed | Dropped:
    try:
        return Passed(types.JSONRPCNotification.model_validate(data))
    except ValidationError as exc:
        return Dropped(f"a notification dropped: {exc.errors()[0]['msg']}")


def _response(data: dict) -> Passed | Dropped:
    if problem(data) is None:
        try:
            return Passed(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
        except ValidationError:
            pass
    return Dropped(f"a response to id {id_text(data.get('id')) or 'null'} dropped: not a usable response")


def _kind(value: Any) -> str:
    if isinstance(value, RawNumber):
        return "a number"
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def read(line: bytes) -> Frame:
    """A line (without its newline) as what the server does with it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(
            types.PARSE_ERROR,
            f"Parse error: the frame is not UTF-8 (byte {exc.start}: {line[exc.start : exc.end].hex(' ')}); "
            "a surrogate encoded as bytes is not UTF-8 either",
            _salvage_id(line),
        )
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        return Refusal(types.PARSE_ERROR, f"Parse error: malformed JSON ({exc.msg} at column {exc.colno})")
    except ValueError as exc:  # NaN, Infinity: accepted by Python, not JSON
        return Refusal(types.PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:
        return Refusal(types.PARSE_ERROR, "Parse error: the JSON is nested too deeply")
    if isinstance(data, list):
        if not data:
            return Refusal(types.INVALID_REQUEST, "Invalid request: an empty batch")
        return Batch([judge(element) for element in data])
    return judge(data)

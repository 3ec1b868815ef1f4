"""JSON-RPC over stdio with every frame checked before the MCP SDK sees it.

The SDK's stdio transport hands a frame it cannot parse to the session as an
exception, and the session drops it: a request with malformed JSON, or with a
lone surrogate escape (valid JSON whose string cannot be encoded as UTF-8, so
no reply to it could be written either), gets no answer, and its client waits
forever. Here each line is decoded as strict UTF-8, parsed, searched for lone
surrogates and validated as a JSON-RPC message before it reaches the server; a
frame that fails is answered with the error JSON-RPC 2.0 names for it:

- -32700 parse error: the bytes are not JSON (id null), or not UTF-8 (with the request's
  id when the rest of the frame shows it: a client waits for the reply to its id);
- -32602 invalid params: a lone surrogate inside `params` (with the request's id);
- -32600 invalid request: anything else that is JSON but not a JSON-RPC message,
  with the request's id when it has a usable one, else null.

Replies the server produces go out one per line; one that cannot be encoded
becomes a -32603 internal error for its request instead of a missing reply.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

Serve = Callable[[Any, Any], Awaitable[None]]  # (read stream, write stream) -> runs the server until EOF


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    usable = (
        request_id
        if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))
        else None
    )
    return types.JSONRPCError(jsonrpc="2.0", id=usable, error=types.ErrorData(code=code, message=message))


def lone_surrogate(value: Any, where: str = "") -> str | None:
    """The path of the first string (key or value) holding an unpaired UTF-16 surrogate, if any."""
    if isinstance(value, str):
        return where or "$" if any("\ud800" <= ch <= "\udfff" for ch in value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            found = lone_surrogate(key, path) or lone_surrogate(item, path)
            if found:
                return found
    if isinstance(value, list):
        for number, item in enumerate(value):
            found = lone_surrogate(item, f"{where}[{number}]")
            if found:
                return found
    return None


def _salvage_id(line: bytes) -> Any:
    """The id of a frame that is JSON apart from its bad bytes, so its client is not left waiting."""
    try:
        data = json.loads(line.decode("utf-8", "surrogateescape"))
    except (json.JSONDecodeError, RecursionError):
        return None
    return data.get("id") if isinstance(data, dict) else None


def check_frame(line: bytes) -> types.JSONRPCMessage | types.JSONRPCError:
    """A frame as a JSON-RPC message for the server, or the error reply it deserves."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(
            _salvage_id(line),
            types.PARSE_ERROR,
            f"Parse error: the frame is not UTF-8 (byte {exc.start}: {line[exc.start : exc.end].hex(' ')}); "
            "a surrogate encoded as bytes is not UTF-8 either",
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _error(
            None, types.PARSE_ERROR, f"Parse error: malformed JSON ({exc.msg} at column {exc.colno})"
        )
    except RecursionError:
        return _error(None, types.PARSE_ERROR, "Parse error: the JSON is nested too deeply")
    request_id = data.get("id") if isinstance(data, dict) else None
    where = lone_surrogate(data)
    if where is not None:
        code = types.INVALID_PARAMS if where.startswith("params") else types.INVALID_REQUEST
        return _error(
            request_id,
            code,
            f"Invalid {'params' if code == types.INVALID_PARAMS else 'request'}: "
            f"{where} holds a lone surrogate (an unpaired \\ud800-\\udfff escape), "
            "which is not a Unicode character; send valid UTF-16 pairs",
        )
    try:
        return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(part) for part in problem["loc"][1:]) or "the message"
        return _error(
            request_id,
            types.INVALID_REQUEST,
            f"Invalid request: not a JSON-RPC 2.0 message ({field}: {problem['msg']})",
        )


def encode(message: types.JSONRPCMessage) -> bytes:
    """One reply line; a reply that cannot be encoded becomes an internal error for its request."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except Exception as exc:  # noqa: BLE001 - the client must get a reply whatever went wrong
        fallback = _error(
            getattr(message, "id", None),
            types.INTERNAL_ERROR,
            f"Internal error: the reply could not be encoded ({type(exc).__name__})",
        )
        return fallback.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"


async def serve_lines(serve: Serve, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Run `serve` on checked frames from `stdin`, writing every reply (its own and ours) to `stdout`."""
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, to_client = anyio.create_memory_object_stream[SessionMessage](0)
    replies = server_writes.clone()  # the reader's error replies share the one writer
    source, sink = anyio.wrap_file(stdin), anyio.wrap_file(stdout)

    async def read() -> None:
        async with to_server, replies:
            async for line in source:
                if not line.strip():
                    continue
                frame = check_frame(line.strip())
                if isinstance(frame, types.JSONRPCError):
                    await replies.send(SessionMessage(frame))
                else:
                    await to_server.send(SessionMessage(frame))

    async def write() -> None:
        async with to_client:
            async for reply in to_client:
                await sink.write(encode(reply.message))
                await sink.flush()

    async with anyio.create_task_group() as group:
        group.start_soon(write)
        async with anyio.create_task_group() as reading:
            reading.start_soon(read)
            await serve(server_reads, server_writes)  # returns once the reader closed its stream (EOF)
            reading.cancel_scope.cancel()
        await replies.aclose()
        await server_writes.aclose()  # the writer drains what is queued, then ends

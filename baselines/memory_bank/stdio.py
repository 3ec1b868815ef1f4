"""JSON-RPC over stdio in front of the MCP SDK: every request gets its reply, whatever else arrives.

- Lines are read by a daemon thread, at most `MAX_FRAME` bytes each (a longer line is refused
  whole), and judged by `frames.read`; a refusal is written at once.
- Requests reach the SDK under ids of the server's own (`Wire`), so a reply goes back with the
  client's id exactly as sent, whatever its JSON type; two requests in flight under one id both get
  their reply; a batch's replies go out together as one array; a `notifications/cancelled` is
  pointed at the request it names.
- When stdin closes, the requests in flight are answered before the server stops (the SDK would
  cancel them): it waits up to `DRAIN_SECONDS`, then any request still unfinished gets -32603.
- No exception raised for one frame ends the loop: it becomes a -32603 reply and one log line.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import SessionMessage

from baselines.memory_bank import frames

log = logging.getLogger("memory_bank")

Serve = Callable[[Any, Any], Awaitable[None]]  # (read stream, write stream) -> runs the server until EOF
MAX_FRAME = 16 * 1024 * 1024
DRAIN_SECONDS = 120.0
OVERSIZE = object()  # a line longer than MAX_FRAME, already skipped


@dataclass
class _Group:
    """One batch: the reply texts so far and how many requests are still out."""

    parts: list[bytes] = field(default_factory=list)
    waiting: int = 0

    def array(self) -> bytes:
        return b"[" + b",".join(self.parts) + b"]\n"


@dataclass
class _Pending:
    id: str  # the client's id, as JSON text
    group: _Group | None


def _line(text: str) -> bytes:
    return text.encode("utf-8") + b"\n"


def _dumps(body: Any) -> str:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: ASCII escapes are still valid JSON
        text = json.dumps(body, separators=(",", ":"))
    return text


class Wire:
    """The ids between client and SDK: what goes in under which id, and whose reply comes out."""

    def __init__(self) -> None:
        self._issued = 0
        self.pending: dict[int, _Pending] = {}

    def inbound(self, line: bytes | object) -> tuple[list[SessionMessage], list[bytes]]:
        """(messages for the SDK, reply lines to write now) for one line from the client."""
        if line is OVERSIZE:
            refusal = frames.Refusal(
                types.INVALID_REQUEST,
                f"Invalid request: a frame of more than {MAX_FRAME} bytes; send smaller messages",
            )
            return [], [_line(refusal.line())]
        frame = frames.read(line)
        if not isinstance(frame, frames.Batch):
            message, reply = self._admit(frame, None)
            return ([message] if message else []), ([_line(reply)] if reply else [])
        group = _Group()
        messages = []
        for element in frame.elements:
            message, reply = self._admit(element, group)
            if message is not None:
                messages.append(message)
            if reply is not None:
                group.parts.append(reply.encode("utf-8"))
        return messages, ([group.array()] if group.waiting == 0 and group.parts else [])

    def _admit(self, frame: Any, group: _Group | None) -> tuple[SessionMessage | None, str | None]:
        if isinstance(frame, frames.Refusal):
            return None, frame.line()
        if isinstance(frame, frames.Dropped):
            log.info("%s", frame.reason)
            return None, None
        if isinstance(frame, frames.Passed):
            return SessionMessage(self._redirect_cancel(frame.message)), None
        self._issued += 1
        self.pending[self._issued] = _Pending(frame.id, group)
        if group is not None:
            group.waiting += 1
        request = types.JSONRPCRequest(
            jsonrpc="2.0", id=self._issued, method=frame.method, params=frame.params
        )
        return SessionMessage(request), None

    def _redirect_cancel(self, message: types.JSONRPCMessage) -> types.JSONRPCMessage:
        """A cancel names the client's id; the SDK knows the request by ours. The cancelled request
        gets no reply (the spec forbids one), so it stops being pending."""
        if not isinstance(message, types.JSONRPCNotification) or message.method != "notifications/cancelled":
            return message
        named = frames.id_text((message.params or {}).get("requestId"))
        ours = [number for number, entry in self.pending.items() if entry.id == named]
        if not ours:
            return message
        number = ours[-1]
        entry = self.pending.pop(number)
        if entry.group is not None:
            entry.group.waiting -= 1  # its batch goes out without it
        return message.model_copy(update={"params": {**message.params, "requestId": number}})

    def outbound(self, message: types.JSONRPCMessage) -> bytes | None:
        """The line to write for a message from the SDK (None: held for its batch, or not owed)."""
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            entry = self.pending.pop(message.id, None) if isinstance(message.id, int) else None
            if entry is None:
                log.debug("a reply to %r that no request is waiting for (cancelled) dropped", message.id)
                return None
            text = self._reply(message, entry.id).encode("utf-8")
            if entry.group is None:
                return text + b"\n"
            entry.group.parts.append(text)
            entry.group.waiting -= 1
            return entry.group.array() if entry.group.waiting == 0 else None
        try:
            return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
        except Exception as exc:  # noqa: BLE001 - a notification that cannot be encoded is not sent
            log.error("a %s could not be encoded (%s: %s)", type(message).__name__, type(exc).__name__, exc)
            return None

    @staticmethod
    def _reply(message: types.JSONRPCResponse | types.JSONRPCError, client_id: str) -> str:
        """The reply with the client's id as sent; one that cannot be encoded becomes -32603."""
        try:
            body = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
            body.pop("jsonrpc", None)
            body.pop("id", None)
            rest = _dumps(body)
        except Exception as exc:  # noqa: BLE001 - the client must get a reply whatever went wrong
            return frames.Refusal(
                types.INTERNAL_ERROR,
                f"Internal error: the reply could not be encoded ({type(exc).__name__})",
                client_id,
            ).line()
        return '{"jsonrpc":"2.0","id":' + client_id + ("," + rest[1:] if body else "}")

    def abandon(self, reason: str) -> list[bytes]:
        """-32603 for every request still pending (the server is stopping), batches together."""
        lines = []
        for entry in list(self.pending.values()):
            text = frames.Refusal(types.INTERNAL_ERROR, f"Internal error: {reason}", entry.id).line()
            if entry.group is None:
                lines.append(_line(text))
            else:
                entry.group.parts.append(text.encode("utf-8"))
                entry.group.waiting -= 1
                if entry.group.waiting == 0:
                    lines.append(entry.group.array())
        self.pending.clear()
        return lines


def _read_lines(stdin: BinaryIO, send: Any, token: Any, max_frame: int) -> None:
    """The reading thread: each line (or OVERSIZE) into the loop, then None at EOF."""
    try:
        while line := stdin.readline(max_frame + 1):
            if len(line) > max_frame and not line.endswith(b"\n"):
                while (rest := stdin.readline(max_frame + 1)) and not rest.endswith(b"\n"):
                    pass
                line = OVERSIZE
            anyio.from_thread.run(send.send, line, token=token)
        anyio.from_thread.run(send.send, None, token=token)
    except Exception as exc:  # noqa: BLE001 - the loop ended first, or stdin failed: either way, EOF
        log.debug("stdin reader stopped: %s", exc)
        try:
            anyio.from_thread.run(send.send, None, token=token)
        except Exception:  # noqa: BLE001
            pass


async def serve_lines(
    serve: Serve,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    max_frame: int = MAX_FRAME,
    drain_seconds: float = DRAIN_SECONDS,
) -> None:
    """Run `serve` on judged frames from `stdin`, writing every reply (its own and ours) to `stdout`."""
    wire = Wire()
    lines_send, lines = anyio.create_memory_object_stream[Any](16)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    out_send, out = anyio.create_memory_object_stream[bytes](1024)
    token = anyio.lowlevel.current_token()
    threading.Thread(
        target=_read_lines, args=(stdin, lines_send, token, max_frame), name="mcp-stdin", daemon=True
    ).start()

    async def write() -> None:
        broken = False
        async with out:
            async for data in out:
                if broken:
                    continue  # the client is gone: drain, so nothing upstream blocks
                try:
                    await anyio.to_thread.run_sync(_write, stdout, data)
                except OSError as exc:
                    broken = True
                    log.warning("the client stopped reading replies (%s); the rest are discarded", exc)

    relay_send = out_send.clone()  # the output ends when both the reader and the relay are done

    async def relay() -> None:
        async with from_server, relay_send as send:
            async for reply in from_server:
                try:
                    data = wire.outbound(reply.message)
                except Exception as exc:  # noqa: BLE001 - one reply must not end the loop
                    log.error("a reply could not be sent (%s: %s)", type(exc).__name__, exc)
                    data = None
                if data is not None:
                    await send.send(data)

    async def read() -> None:
        async with to_server, out_send:
            async for line in lines:
                if line is None:
                    break
                try:
                    messages, replies = wire.inbound(line)
                except Exception as exc:  # noqa: BLE001 - one frame must not end the loop
                    log.error("a frame could not be handled (%s: %s)", type(exc).__name__, exc)
                    messages = []
                    replies = [
                        _line(
                            frames.Refusal(
                                types.INTERNAL_ERROR,
                                f"Internal error: the frame could not be handled ({type(exc).__name__})",
                            ).line()
                        )
                    ]
                for data in replies:
                    await out_send.send(data)
                try:
                    for message in messages:
                        await to_server.send(message)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    log.error("the MCP server stopped reading requests")
                    break
            with anyio.move_on_after(drain_seconds):  # stdin closed: answer what is in flight first
                while wire.pending:
                    await anyio.sleep(0.02)
            for data in wire.abandon(
                f"the server stopped (stdin closed) before it finished the request within {drain_seconds:g} s"
            ):
                await out_send.send(data)

    async with anyio.create_task_group() as group:
        group.start_soon(write)
        group.start_soon(relay)
        group.start_soon(read)
        try:
            await serve(server_reads, server_writes)  # returns once `read` closed its stream
        finally:
            await server_writes.aclose()


def _write(stdout: BinaryIO, data: bytes) -> None:
    stdout.write(data)
    stdout.flush()

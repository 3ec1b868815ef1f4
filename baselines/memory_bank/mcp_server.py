"""Memory Bank over MCP (stdio): the seed's three tools, search_memory, save_memory and delete_memory.

    python -m baselines.memory_bank.mcp_server --db memory.sqlite

Tools are coroutines, so they run on the server's one event-loop thread with the bank's SQLite
connection. A live MCP client has no replay clock: this server uses the wall clock for
createdAt, lastUsedAt and the 7-day recency boost.

Every request gets an answer. Frames are checked before the SDK sees them (`stdio.py`:
malformed JSON, bytes that are not UTF-8 and lone surrogates get their JSON-RPC error instead
of silence). When the database cannot be opened the bank is the seed's no-op memory, but a
client must not be told "saved" for a memory that is dropped: every tool then fails with a tool
error naming the database and the cause (the server keeps running, so the client can show
it). A write that fails later is a tool error too, and nothing of it is kept.
"""

from __future__ import annotations

import argparse
import os
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from baselines.memory_bank.bank import MemoryBank, open_bank
from baselines.memory_bank.records import SemanticEntry, ms
from baselines.memory_bank.stdio import serve_lines
from baselines.memory_bank.storage import StorageError


class Saved(BaseModel):
    id: str
    evicted: list[str]


class Deleted(BaseModel):
    id: str
    deleted: bool


def build_server(bank: MemoryBank):
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("memory-bank", log_level="WARNING")

    def usable(action: str) -> None:
        if not bank.available:
            raise ToolError(
                f"Memory Bank storage is unavailable ({getattr(bank, 'reason', 'unknown cause')}); "
                f"nothing was {action}. Restart the server with --db pointing at a writable SQLite file."
            )

    @server.tool()
    async def search_memory(
        query: str, type: Literal["semantic", "episodic"] = "semantic", limit: int = 5
    ) -> list[dict]:
        """Search memories: semantic experience (default) or episodic task logs, best first."""
        usable("searched")
        if type == "episodic":
            return [
                {"id": e.id, "goal": e.goal, "summary": e.summary, "score": round(score, 4)}
                for e, score in bank.search_episodes(query, limit)
            ]
        found = bank.search(query, datetime.now(), limit)
        now = ms(datetime.now())
        for scored in found:  # a hit is a use: hits + 1, lastUsedAt = now
            scored.entry.hits += 1
            scored.entry.last_used_at = now
        try:
            bank.commit()
        except StorageError as exc:
            raise ToolError(str(exc)) from exc
        return [
            {
                "id": s.entry.id,
                "title": s.entry.title,
                "content": s.entry.content,
                "keywords": s.entry.keywords,
                "polarity": s.entry.polarity,
                "app": s.entry.app,
                "score": round(s.score, 4),
            }
            for s in found
        ]

    @server.tool()
    async def save_memory(
        title: str,
        content: str,
        keywords: list[str] | None = None,
        polarity: Literal["positive", "negative"] = "positive",
        app: str | None = None,
    ) -> Saved:
        """Write a semantic memory; returns its id (and any ids evicted to stay within 500)."""
        usable("saved")
        entry = SemanticEntry(
            id=bank.new_id("sem"),
            title=title,
            content=content,
            keywords=keywords or [],
            polarity=polarity,
            app=app,
            created_at=ms(datetime.now()),
        )
        try:
            evicted = bank.add_semantic(entry)
        except StorageError as exc:
            raise ToolError(str(exc)) from exc
        return Saved(id=entry.id, evicted=evicted)

    @server.tool()
    async def delete_memory(id: str) -> Deleted:
        """Delete a semantic or episodic memory by id."""
        usable("deleted")
        try:
            return Deleted(id=id, deleted=bank.delete(id))
        except StorageError as exc:
            raise ToolError(str(exc)) from exc

    return server


def _claim_stdio() -> tuple[object, object]:
    """The protocol's own stdin/stdout; fd 0 and 1 then point at /dev/null and stderr, so nothing else
    (a library's print, a child process) can read a frame or write into the stream."""
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def main(argv: list[str] | None = None) -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("memory-bank.sqlite"), help="SQLite file of the bank")
    args = parser.parse_args(argv)
    server = build_server(open_bank(args.db))
    low = server._lowlevel_server  # the SDK's stdio transport drops bad frames; ours answers them
    wire_in, wire_out = _claim_stdio()

    async def serve(read, write) -> None:
        await low.run(read, write, low.create_initialization_options())

    anyio.run(serve_lines, serve, wire_in, wire_out)


if __name__ == "__main__":
    main()

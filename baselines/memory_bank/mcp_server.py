"""Memory Bank over MCP (stdio): the seed's three tools, search_memory, save_memory and delete_memory.

    python -m baselines.memory_bank.mcp_server [--db memory.sqlite]

Without --db the bank is per user (`default_db`), not in whatever directory the MCP client
happened to start the server in; the path in use is printed to stderr at start. Several
servers may share one database: ids come from the database and every write is one transaction
that first applies the others' writes (`bank.py`, `storage.py`), so none is overwritten.

Tools are coroutines, so they run on the server's one event-loop thread with the bank's SQLite
connection. A live MCP client has no replay clock: this server uses the wall clock for
createdAt, lastUsedAt and the 7-day recency boost.

Every request gets an answer. Frames are judged before the SDK sees them (`frames.py`,
`stdio.py`: a parse error, an invalid request or invalid params gets its JSON-RPC error instead
of silence, an id of any JSON-RPC type is echoed as sent, requests in flight when stdin closes
are answered before the server stops). When the database cannot be opened the bank is the
seed's no-op memory, but a client must not be told "saved" for a memory that is dropped: every
tool then fails with a tool error naming the database and the cause (the server keeps running,
so the client can show it). A write that fails later is a tool error too, and nothing of it is kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from baselines.memory_bank.bank import MemoryBank, open_bank
from baselines.memory_bank.records import SemanticEntry, ms
from baselines.memory_bank.stdio import serve_lines
from baselines.memory_bank.storage import StorageError

DB_ENV = "KEME_MEMORY_BANK_DB"


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
        try:
            with bank.transaction():  # sees what other servers on this database saved
                if type == "episodic":
                    return [
                        {"id": e.id, "goal": e.goal, "summary": e.summary, "score": round(score, 4)}
                        for e, score in bank.search_episodes(query, limit)
                    ]
                found = bank.search(query, datetime.now(), limit)
                bank.use([s.entry for s in found], ms(datetime.now()))  # a hit is a use
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
        try:
            with bank.transaction():  # the id and the row in one transaction: no other server gets the id
                entry = SemanticEntry(
                    id=bank.new_id("sem"),
                    title=title,
                    content=content,
                    keywords=keywords or [],
                    polarity=polarity,
                    app=app,
                    created_at=ms(datetime.now()),
                )
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
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def default_db(environ: Mapping[str, str] = os.environ) -> Path:
    """$KEME_MEMORY_BANK_DB, else $XDG_DATA_HOME/keme/memory-bank.sqlite, else
    ~/.local/share/keme/memory-bank.sqlite: one bank per user, wherever a client starts the server
    (MCP clients start it in a directory of their choosing, often not one the user would look in)."""
    if environ.get(DB_ENV):
        return Path(environ[DB_ENV]).expanduser()
    base = Path(environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "keme" / "memory-bank.sqlite"


def main(argv: list[str] | None = None) -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help=f"SQLite file of the bank (default: ${DB_ENV}, else $XDG_DATA_HOME/keme/memory-bank.sqlite, "
        "else ~/.local/share/keme/memory-bank.sqlite); several servers may share one",
    )
    args = parser.parse_args(argv)
    try:
        db = (args.db or default_db()).expanduser().absolute()
    except RuntimeError as exc:  # no home directory to put the default bank in
        parser.error(f"{exc}; give the bank's file with --db or ${DB_ENV}")
    bank = open_bank(db)
    print(f"Memory Bank MCP server: database {db}", file=sys.stderr, flush=True)
    server = build_server(bank)
    low = server._lowlevel_server  # the SDK's stdio transport drops bad frames; ours answers them
    wire_in, wire_out = _claim_stdio()

    async def serve(read, write) -> None:
        await low.run(read, write, low.create_initialization_options())

    try:
        anyio.run(serve_lines, serve, wire_in, wire_out)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - said in one line, not a traceback
        print(f"Memory Bank MCP server stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

"""Memory Bank over MCP (stdio): the seed's three tools, search_memory, save_memory and delete_memory.

    python -m baselines.memory_bank.mcp_server --db memory.sqlite

Tools are coroutines, so they run on the server's one event-loop thread with the bank's SQLite
connection. A live MCP client has no replay clock: this server uses the wall clock for
createdAt, lastUsedAt and the 7-day recency boost.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from baselines.memory_bank.bank import MemoryBank, open_bank
from baselines.memory_bank.records import SemanticEntry, ms


class Saved(BaseModel):
    id: str
    evicted: list[str]


class Deleted(BaseModel):
    id: str
    deleted: bool


def build_server(bank: MemoryBank):
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("memory-bank", log_level="WARNING")

    @server.tool()
    async def search_memory(query: str, type: Literal["semantic", "episodic"] = "semantic", limit: int = 5) -> list[dict]:
        """Search memories: semantic experience (default) or episodic task logs, best first."""
        if type == "episodic":
            return [{"id": e.id, "goal": e.goal, "summary": e.summary, "score": round(score, 4)}
                    for e, score in bank.search_episodes(query, limit)]
        found = bank.search(query, datetime.now(), limit)
        now = ms(datetime.now())
        for scored in found:  # a hit is a use: hits + 1, lastUsedAt = now
            scored.entry.hits += 1
            scored.entry.last_used_at = now
        bank.commit()
        return [{"id": s.entry.id, "title": s.entry.title, "content": s.entry.content, "keywords": s.entry.keywords,
                 "polarity": s.entry.polarity, "app": s.entry.app, "score": round(s.score, 4)} for s in found]

    @server.tool()
    async def save_memory(title: str, content: str, keywords: list[str] | None = None,
                    polarity: Literal["positive", "negative"] = "positive", app: str | None = None) -> Saved:
        """Write a semantic memory; returns its id (and any ids evicted to stay within 500)."""
        entry = SemanticEntry(id=bank.new_id("sem"), title=title, content=content, keywords=keywords or [],
                              polarity=polarity, app=app, created_at=ms(datetime.now()))
        evicted = bank.add_semantic(entry)
        return Saved(id=entry.id, evicted=evicted)

    @server.tool()
    async def delete_memory(id: str) -> Deleted:
        """Delete a semantic or episodic memory by id."""
        return Deleted(id=id, deleted=bank.delete(id))

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("memory-bank.sqlite"), help="SQLite file of the bank")
    args = parser.parse_args(argv)
    build_server(open_bank(args.db)).run("stdio")


if __name__ == "__main__":
    main()

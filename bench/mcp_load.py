"""Several Memory Bank MCP servers on one database, each sent a burst of saves (issue 35).

Each server is its own process (`python -m baselines.memory_bank.mcp_server --db FILE`, all on one
FILE), spoken to over its stdio pipes. After the handshake, all servers are released at once; each
is sent its saves back to back without waiting for replies, and its stdin is closed right after the
last one, so most requests are still in flight at EOF and must be answered before the server exits.
Printed:

- sent, answered (replies carrying a sent id), acknowledged (saves replied "saved"), errors;
- rows (in the file afterwards), evicted (ids the saves' replies reported evicted by the 500-entry
  LRU limit), lost (acknowledged saves whose memory is neither in the file nor reported evicted:
  two saves acknowledged under one id leave one row, so one of them is lost), duplicates (saves
  acknowledged under an id already acknowledged), phantoms (rows no save acknowledged), exits
  (non-zero exit codes);
- seconds from the release to the last server's exit.

Exit status 1 if anything was lost, unanswered, duplicated or a server failed.

    python bench/mcp_load.py [--servers 4] [--saves 150] [--db FILE] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import time

ROOT = Path(__file__).resolve().parents[1]
HANDSHAKE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "load", "version": "1"},
    },
}


def _frame(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _save(server: int, number: int) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": f"{server}-{number}",
        "method": "tools/call",
        "params": {
            "name": "save_memory",
            "arguments": {
                "title": f"note {number} of server {server}",
                "content": f"load test {server} {number}",
            },
        },
    }


def _drive(
    server: int, saves: int, db: Path, release: threading.Barrier, replies: list[dict], exits: list
) -> None:
    """One server: handshake, wait for the others, send every save, close stdin, read until EOF."""
    process = subprocess.Popen(
        [sys.executable, "-m", "baselines.memory_bank.mcp_server", "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    process.stdin.write(_frame(HANDSHAKE))
    process.stdin.flush()
    process.stdout.readline()
    process.stdin.write(_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    release.wait()
    burst = b"".join(_frame(_save(server, number)) for number in range(saves))
    writer = threading.Thread(target=lambda: (process.stdin.write(burst), process.stdin.close()))
    writer.start()  # written while replies are read, so neither pipe can fill up and stall the other
    for line in process.stdout:
        replies.append(json.loads(line))
    writer.join()
    exits.append(process.wait())


def run(servers: int, saves: int, db: Path) -> dict:
    release = threading.Barrier(servers + 1)
    replies: list[dict] = []
    exits: list[int] = []
    threads = [
        threading.Thread(target=_drive, args=(server, saves, db, release, replies, exits))
        for server in range(servers)
    ]
    for thread in threads:
        thread.start()
    release.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    sent = {f"{server}-{number}" for server in range(servers) for number in range(saves)}
    answered = [r for r in replies if r.get("id") in sent]
    saved = [
        r["result"]["structuredContent"] for r in answered if r.get("result", {}).get("isError") is False
    ]
    acknowledged = [s["id"] for s in saved]
    evicted = {victim for s in saved for victim in s["evicted"]}
    with sqlite3.connect(db) as connection:
        rows = {r[0] for r in connection.execute("SELECT id FROM semantic")}
    return {
        "servers": servers,
        "sent": len(sent),
        "answered": len({r["id"] for r in answered}),
        "acknowledged": len(acknowledged),
        "errors": len(answered) - len(saved),
        "rows": len(rows),
        "evicted": len(evicted),
        # each kept or evicted id accounts for one acknowledged save; the rest are lost
        "lost": len(acknowledged) - len(set(acknowledged) & (rows | evicted)),
        "duplicates": len(acknowledged) - len(set(acknowledged)),
        "phantoms": len(rows - set(acknowledged)),
        "exits": sorted(code for code in exits if code != 0),
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--saves", type=int, default=150, help="per server")
    parser.add_argument(
        "--db", type=Path, default=None, help="a fresh SQLite file (default: a temporary one)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = run(args.servers, args.saves, args.db or Path(tmp) / "bank.sqlite")
    if args.json:
        print(json.dumps(figures))
    else:
        f = figures
        print(
            f"{f['servers']} servers on one database: sent {f['sent']}, answered {f['answered']}, "
            f"acknowledged {f['acknowledged']}, errors {f['errors']}"
        )
        print(
            f"rows {f['rows']} + evicted {f['evicted']} (LRU limit 500) = {f['rows'] + f['evicted']}; "
            f"lost {f['lost']}, duplicates {f['duplicates']}, phantoms {f['phantoms']}, "
            f"failed exits {f['exits'] or 'none'}; {f['seconds']} s"
        )
    bad = (
        figures["lost"]
        or figures["duplicates"]
        or figures["phantoms"]
        or figures["exits"]
        or figures["answered"] != figures["sent"]
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

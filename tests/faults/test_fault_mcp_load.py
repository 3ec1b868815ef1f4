"""Four Memory Bank MCP servers on one database, 150 saves each, stdin closed with most still in flight.

Runs `bench/mcp_load.py` (which drives the processes over their stdio pipes) and checks its figures
against the file itself: every request answered, every acknowledged save either a row or reported
evicted by the LRU limit, no id acknowledged twice, no server failing.
"""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest
from probe import ROOT, run

pytestmark = pytest.mark.fault
pytest.importorskip("mcp")

SERVERS, SAVES = 4, 150


def test_four_servers_on_one_database_lose_no_acknowledged_save(tmp_path):
    db = tmp_path / "bank.sqlite"
    args = ["--servers", str(SERVERS), "--saves", str(SAVES), "--db", str(db), "--json"]
    result = run([sys.executable, str(ROOT / "bench" / "mcp_load.py"), *args], expect="ok", timeout=300)
    assert result.outcome == "ok", result.output[-3000:]
    figures = json.loads(result.stdout.splitlines()[-1])
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT count(*) FROM semantic").fetchone()[0]
    sent = SERVERS * SAVES
    kept = (
        figures["sent"] == figures["answered"] == figures["acknowledged"] == sent
        and figures["rows"] == rows == min(sent, 500)
        and figures["rows"] + figures["evicted"] == figures["acknowledged"]
        and figures["lost"] == figures["duplicates"] == figures["phantoms"] == 0
        and figures["exits"] == []
    )
    assert kept, figures  # the run is recorded "ok" only if the bench found nothing lost (it exits 1)

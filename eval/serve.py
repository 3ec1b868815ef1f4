"""Serve one registered memory system over JSON lines on stdin/stdout (see eval.subprocess_adapter).

python -m eval.serve bm25 [--param k1=1.5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any

from eval.contract import Closeable, Query, Sized
from eval.registry import create
from eval.run import peak_rss_bytes
from keme.models import Session


def handle(system: Any, method: str, params: dict[str, Any]) -> Any:
    if method == "hello":
        capabilities = ["size", "storage_bytes"] if isinstance(system, Sized) else []
        return {"name": system.name, "capabilities": capabilities}
    if method == "config_fingerprint":
        return system.config_fingerprint()
    if method == "reset":
        return system.reset(params["scope"])
    if method == "ingest":
        return system.ingest(params["scope"], Session.model_validate(params["session"])).model_dump()
    if method == "flush":
        return system.flush(params["scope"])
    if method == "retrieve":
        return system.retrieve(
            params["scope"], Query.model_validate(params["query"]), int(params["k"])
        ).model_dump(mode="json")
    if method == "peak_rss":
        return peak_rss_bytes()
    if method == "size":
        return system.size(params["scope"])
    if method == "storage_bytes":
        return system.storage_bytes(params["scope"])
    raise ValueError(f"unknown method {method!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("--param", action="append", default=[], help="key=JSON value passed to the factory")
    args = parser.parse_args(argv)
    params = {}
    for item in args.param:
        key, _, value = item.partition("=")
        params[key] = json.loads(value)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr  # anything the system prints must not corrupt the protocol stream
    system = create(args.system, **params)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            response: dict[str, Any] = {"id": request.get("id")}
            if request.get("method") == "close":
                out.write(json.dumps(response | {"result": None}) + "\n")
                break
            try:
                response["result"] = handle(system, request["method"], request.get("params", {}))
            except Exception as exc:  # reported to the client, which raises with this message
                traceback.print_exc(file=sys.stderr)
                response["error"] = {"type": type(exc).__name__, "message": str(exc)}
            out.write(json.dumps(response, ensure_ascii=False, default=str) + "\n")
    finally:
        if isinstance(system, Closeable):  # a system's temporary files go when it does
            system.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

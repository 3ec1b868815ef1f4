"""A wall-clock deadline for a blocking call.

Socket timeouts bound each read, not an attempt: an endpoint that drips a byte a second never trips a
20 s read timeout. `within` bounds the whole call (name lookup, connect, headers, every read of the
body) by the caller's clock instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def within(seconds: float, work: Callable[[], T], expired: Callable[[], BaseException]) -> T:
    """`work()`'s result if it ends within `seconds` of wall clock; else raise `expired()`.

    Abandoned work goes on in a daemon thread until its own socket timeout (it cannot be interrupted);
    a result it gets late is closed when it can be, so its connection goes back.
    """
    box: dict[str, object] = {}
    lock = threading.Lock()
    done = threading.Event()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            box["error"] = exc
        else:
            with lock:
                late = box.get("late", False)
                box["result"] = result
            if late and hasattr(result, "close"):
                result.close()
        finally:
            done.set()

    threading.Thread(target=run, name="keme-llm-attempt", daemon=True).start()
    if not done.wait(max(seconds, 0.0)):
        with lock:
            if "result" not in box and "error" not in box:
                box["late"] = True
        if box.get("late"):
            raise expired()
        done.wait()  # it ended just now: take its outcome
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]

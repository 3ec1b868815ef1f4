"""`python -m keme.llm.child PARENT_PID MODULE ARGS...`: run `python -m MODULE ARGS...` (llama.cpp's server,
`llama_cpp.server`) for as long as the keme process PARENT_PID lives.

keme stops its child at exit; this covers the case where keme cannot (SIGKILL, a crash): a thread
notices that the parent is gone and ends the child, so no model server is left behind.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time


def watch(parent: int, every_s: float = 0.5) -> None:
    while os.getppid() == parent:
        time.sleep(every_s)
    os._exit(0)


def main(argv: list[str]) -> None:
    parent, module, args = int(argv[0]), argv[1], argv[2:]
    threading.Thread(target=watch, args=(parent,), daemon=True, name="parent-watch").start()
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])

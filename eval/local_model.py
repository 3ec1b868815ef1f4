"""The shipped model as an OpenAI-compatible endpoint for the memory systems that call an LLM (mem0, LangMem).

The harness owns it and hands it to those systems (`eval.registry.create` injects `LOCAL_MODEL`), so the
systems never start processes themselves: one llama.cpp server child per process, on loopback, started on
first use, shared by every system that asks, stopped at exit or by `stop()`.
"""

from __future__ import annotations

import threading

from keme.errors import KemeError
from keme.llm.providers import default_gguf
from keme.llm.server import LocalServer, llama_server_command, missing_modules

MODEL = "SmolLM2-135M-Instruct"
# mem0's extraction prompt alone is about 8,600 SmolLM2 tokens: the local server needs more than the
# model's 8,192-token training window (llama.cpp allows it, with a warning)
N_CTX = 12288


class LocalModel:
    """Starts the server on the first `url()`; `model` is the name it answers to."""

    model = MODEL

    def __init__(self, n_ctx: int = N_CTX):
        self.n_ctx = n_ctx
        self.lock = threading.Lock()
        self.server: LocalServer | None = None

    def url(self) -> str:
        """The base URL of the running server (started now if it is not running)."""
        with self.lock:
            if self.server is None:
                self.server = _server(self.n_ctx)
            if self.server.url is None or self.server.death() is not None:
                self.server.start()
            assert self.server.url is not None
            return self.server.url

    def failure(self) -> str | None:
        """How the server ended if it died (its exit status and the end of its log); None while it runs."""
        with self.lock:
            died = self.server.death() if self.server is not None else None
        return str(died) if died is not None else None

    def stop(self) -> None:
        """Stop the server (idempotent); the next `url()` starts a new one."""
        with self.lock:
            if self.server is not None:
                self.server.stop()


def _server(n_ctx: int) -> LocalServer:
    missing = missing_modules()
    if missing:
        raise KemeError(
            "the local model runs llama.cpp's server, which needs llama-cpp-python[server] "
            f"(missing: {', '.join(missing)}): run scripts/setup.sh, or set the system's base_url to an "
            "OpenAI-compatible endpoint"
        )
    base = llama_server_command(default_gguf(), alias=MODEL, n_ctx=n_ctx, n_threads=None, seed=0)

    def command(port: int) -> list[str]:
        # No logits kept for every prompt token (llama_cpp.server's default, for logprobs no caller asks
        # for): at n_ctx 12288 that is a 2.4 GB array, and its RAM prompt cache copied it into every saved
        # state without counting it against its capacity (the server grew by ~2 GB a mem0 call until the
        # OOM killer stopped it). No prompt cache either: the model keeps the last request's evaluated
        # tokens and reuses their longest common prefix, so mem0's 8.6k-token prompt is evaluated once as
        # long as its calls come one after the other (the harness runs systems in turn).
        return base(port) + ["--logits_all", "False"]

    return LocalServer(command, startup_timeout_s=180)


LOCAL_MODEL = LocalModel()  # the process's one local endpoint

"""The LLM endpoint behind the field's memory systems (mem0, LangMem): where it is, and what it cost.

Both libraries talk to an OpenAI-compatible endpoint through the `openai` SDK. We hand them an HTTP client
whose transport meters every chat completion (calls, prompt and completion tokens, from the server's own
`usage` field), so the leaderboard's efficiency columns are what the endpoint reported, not estimates.

Without a `base_url` the endpoint is the shipped SmolLM2 GGUF behind llama.cpp's server on loopback, which
the harness owns and injects (`LocalModel`, eval.local_model): a memory system never starts a process.
That server cannot do two things these libraries ask of an endpoint, so for it alone the transport
translates (`local_dialect`): OpenAI's newer `max_completion_tokens` becomes `max_tokens` (llama.cpp
ignores the former and would generate up to its context), and a request that needs a structured reply
gets a decoding constraint llama.cpp does support (a JSON schema; a named tool). Each translation is named
where it is made; a capable endpoint gets the libraries' requests unchanged.
"""

from __future__ import annotations

import ipaddress
import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlparse

from eval.contract import Usage
from keme.errors import KemeError

try:
    import httpx2  # the HTTP library of `openai` (the `llm` extra)
except ImportError as exc:  # pragma: no cover - every adapter needs openai, which brings httpx2
    raise KemeError("the field's memory systems need the `openai` package: pip install -e '.[llm]'") from exc

DEFAULT_MODEL = "SmolLM2-135M-Instruct"  # the model name sent to an endpoint when none is configured


class Meter:
    """LLM calls and tokens as the endpoint reported them; thread-safe (LangMem may call in parallel)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.usage = Usage()

    def add(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self.lock:
            self.usage = self.usage + Usage(
                llm_calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )

    def snapshot(self) -> Usage:
        with self.lock:
            return self.usage.model_copy()


def since(meter: Meter, before: Usage) -> Usage:
    """What `meter` counted after `before` was taken."""
    now = meter.snapshot()
    return Usage(**{k: getattr(now, k) - getattr(before, k) for k in Usage.model_fields})


Rewrite = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class Endpoint:
    """An OpenAI-compatible endpoint and how to talk to it."""

    base_url: str
    model: str
    api_key: str
    local: bool  # the shipped model behind our own llama.cpp server
    meter: Meter = field(default_factory=Meter)

    @property
    def where(self) -> str:
        return "the local model (llama.cpp server on loopback)" if self.local else self.base_url

    def http_client(self, rewrite: Rewrite | None = None, timeout_s: float = 600.0):
        """An httpx2 client (what `openai` uses) that meters every chat completion and applies `rewrite`."""
        return httpx2.Client(
            transport=_MeteredTransport(httpx2.HTTPTransport(), self.meter, rewrite),
            timeout=httpx2.Timeout(timeout_s, connect=10.0),
        )


class _MeteredTransport(httpx2.BaseTransport):
    """Wraps a transport: rewrites chat-completion requests (local dialect) and counts their usage."""

    def __init__(self, inner: Any, meter: Meter, rewrite: Rewrite | None):
        self.inner, self.meter, self.rewrite = inner, meter, rewrite

    def handle_request(self, request):
        chat = request.method == "POST" and request.url.path.endswith("/chat/completions")
        if chat and self.rewrite is not None:
            body = self.rewrite(json.loads(request.read()))
            request = httpx2.Request(
                request.method,
                request.url,
                headers={k: v for k, v in request.headers.items() if k.lower() != "content-length"},
                content=json.dumps(body).encode(),
                extensions=request.extensions,
            )
        response = self.inner.handle_request(request)
        if chat and response.status_code == 200:
            response.read()
            try:
                usage = json.loads(response.content).get("usage") or {}
            except (ValueError, AttributeError):
                usage = {}
            self.meter.add(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
        return response

    def close(self) -> None:
        self.inner.close()


def local_dialect(request: dict[str, Any], *, schema: dict | None = None, force_tool: bool = False) -> dict:
    """A request as llama.cpp's server understands it (see the module docstring).

    `schema`: a `json_object` reply is constrained to it (llama.cpp's `response_format.schema`).
    `force_tool`: with tools and no named tool_choice, the first tool is named (llama.cpp constrains a
    named tool's arguments to its schema; for "auto" or "required" it lets the model write prose, and a
    135M model never calls a tool by itself).
    """
    body = dict(request)
    if "max_completion_tokens" in body:
        body["max_tokens"] = body.pop("max_completion_tokens")
    fmt = body.get("response_format")
    if schema is not None and isinstance(fmt, dict) and fmt.get("type") == "json_object":
        body["response_format"] = {"type": "json_object", "schema": schema}
    tools = body.get("tools") or []
    if force_tool and tools and not isinstance(body.get("tool_choice"), dict):
        body["tool_choice"] = {"type": "function", "function": {"name": tools[0]["function"]["name"]}}
        body.pop("parallel_tool_calls", None)
    return body


class LocalModel(Protocol):
    """The shipped model's endpoint, which the harness owns and injects (eval.local_model)."""

    model: str

    def url(self) -> str: ...


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine (such an endpoint needs no API key)."""
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def open_endpoint(
    system: str, base_url: str | None, model: str | None, api_key_env: str | None, local: LocalModel | None
) -> Endpoint:
    """The endpoint a system was configured with, reachable now; else a KemeError naming what to fix.

    `base_url` None: the shipped model that the harness injected as `local`. A remote endpoint's key is read
    from the environment variable `api_key_env` names (never from a params file); loopback needs none.
    """
    if base_url is None:
        if local is None:
            raise KemeError(
                f"{system}: no LLM endpoint: set the system's base_url parameter (--params) to an "
                "OpenAI-compatible endpoint, or build it through the harness, which provides the local model"
            )
        return Endpoint(local.url(), local.model, "no-key", local=True)
    key = os.environ.get(api_key_env) if api_key_env else None
    if not key:
        if not is_loopback(base_url):
            raise KemeError(
                f"{system}: no API key for {base_url}: set the environment variable "
                f"{api_key_env or '(none named)'} (the system's api_key_env parameter names it)"
            )
        key = "no-key"
    _probe(system, base_url)
    return Endpoint(base_url.rstrip("/"), model or DEFAULT_MODEL, key, local=False)


def _probe(system: str, base_url: str) -> None:
    """Fail now, naming the endpoint, when nothing answers there (any HTTP reply counts as alive)."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=10):
            return
    except urllib.error.HTTPError:
        return  # it answered: 401/404 are the library's to report
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise KemeError(
            f"{system}: cannot reach the OpenAI-compatible endpoint {base_url} ({reason}): start the "
            "server, or fix the system's base_url parameter (--params; usually ending in /v1), or leave "
            "base_url unset to use the local model"
        ) from exc


def explain(system: str, endpoint: Endpoint, exc: BaseException) -> KemeError | None:
    """A KemeError for an endpoint failure anywhere in `exc`'s chain (what, where, fix); None otherwise."""
    seen: BaseException | None = exc
    while seen is not None:
        name = type(seen).__name__
        if name in ("APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ReadTimeout"):
            return KemeError(
                f"{system}: the LLM endpoint {endpoint.where} did not answer ({name}: {str(seen)[:160]}): "
                "check that it is running and the system's base_url parameter"
            )
        status = getattr(seen, "status_code", None)
        if name.endswith("Error") and isinstance(status, int):
            hint = {
                401: "check the key in the variable api_key_env names",
                404: "check the system's model and base_url parameters",
            }.get(status, "see the endpoint's log")
            return KemeError(
                f"{system}: the LLM endpoint {endpoint.where} refused a request ({status}: "
                f"{str(seen)[:200]}): {hint}"
            )
        seen = seen.__cause__ or seen.__context__
    return None

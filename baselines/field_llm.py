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

Every request is bounded: each attempt has a wall-clock deadline (`deadline_s`, enforced by the transport
for every request, headers and body, not only between bytes), each call a total one over its attempts
(`budget_s`: an attempt gets no more than is left of it, and none starts when it is spent), and the `openai`
SDK makes at most `max_retries` more attempts (its default, 2, is what both libraries' own clients use) on
a timeout, a dropped connection, 429 or 5xx; then the library gets the SDK's error and the system raises
one KemeError naming the endpoint, the limits and the parameters to raise. The transport also
counts, per reply, whether the library can read it (`Replies`: the library's own parser decides) and which
requests are retries (the SDK's retry counter, or the library asking again after a reply it rejected).
"""

from __future__ import annotations

import ipaddress
import json
import os
import threading
import time
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
    """LLM calls, tokens, unreadable replies and retries as the transport saw them; thread-safe (LangMem may
    call in parallel)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.usage = Usage()

    def add(self, prompt_tokens: int, completion_tokens: int, unparseable: bool = False) -> None:
        """One reply of the endpoint."""
        with self.lock:
            self.usage = self.usage + Usage(
                llm_calls=1,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                llm_unparseable=int(unparseable),
            )

    def retried(self) -> None:
        """One request that repeats an earlier one (after a failed attempt or a rejected reply)."""
        with self.lock:
            self.usage = self.usage + Usage(llm_retries=1)

    def snapshot(self) -> Usage:
        with self.lock:
            return self.usage.model_copy()


def since(meter: Meter, before: Usage) -> Usage:
    """What `meter` counted after `before` was taken."""
    now = meter.snapshot()
    return Usage(**{k: getattr(now, k) - getattr(before, k) for k in Usage.model_fields})


@dataclass(frozen=True)
class Replies:
    """How a library reads its model's chat replies (each system names its library's own rules).

    `readable(request, reply)`: whether the library's parser accepts the reply (both as JSON bodies);
    `asks_again(request)`: whether the request is the library asking again after a reply it rejected.
    """

    readable: Callable[[dict[str, Any], dict[str, Any]], bool] = lambda request, reply: True
    asks_again: Callable[[dict[str, Any]], bool] = lambda request: False


Rewrite = Callable[[dict[str, Any]], dict[str, Any]]


DEADLINE_S = 300.0  # an attempt's wall-clock limit: the CPU-bound local model may need minutes for a reply
BUDGET_S = 600.0  # one call's wall-clock limit over all its attempts (openai's 600 s bounds each read)
MAX_RETRIES = 2  # more attempts after a failed one: openai's default, which both libraries' clients keep
PROBE_S = 10.0  # how long the endpoint may take to answer the first look at it


def check_limits(system: str, deadline_s: float, budget_s: float, max_retries: int) -> None:
    """Refuse limits that cannot bound a call (ValueError: the harness reports a bad parameter)."""
    if not deadline_s > 0 or not budget_s > 0 or max_retries < 0:
        raise ValueError(
            f"{system}: deadline_s and budget_s must be > 0 and max_retries >= 0, "
            f"not {deadline_s}, {budget_s}, {max_retries}"
        )
    if budget_s < deadline_s:
        raise ValueError(
            f"{system}: budget_s ({budget_s:g} s) is shorter than one attempt's deadline_s "
            f"({deadline_s:g} s): raise budget_s or lower deadline_s"
        )


@dataclass
class Endpoint:
    """An OpenAI-compatible endpoint and how to talk to it."""

    base_url: str
    model: str
    api_key: str
    local: bool  # the shipped model behind our own llama.cpp server
    meter: Meter = field(default_factory=Meter)
    host: Any = None  # the LocalModel serving a local endpoint (it can say how its server died)
    deadline_s: float = DEADLINE_S
    budget_s: float = BUDGET_S
    max_retries: int = MAX_RETRIES

    @property
    def where(self) -> str:
        return "the local model (llama.cpp server on loopback)" if self.local else self.base_url

    @property
    def bound(self) -> str:
        """The limits of one call, as an error message states them."""
        return (
            f"{self.max_retries + 1} attempts of at most {self.deadline_s:g} s each (deadline_s), "
            f"{self.budget_s:g} s in all (budget_s)"
        )

    def http_client(self, rewrite: Rewrite | None = None, replies: Replies | None = None):
        """An httpx2 client (what `openai` uses) that meters every chat completion, applies `rewrite` and
        enforces the per-attempt deadline."""
        transport = _MeteredTransport(
            httpx2.HTTPTransport(), self.meter, rewrite, replies or Replies(), self.deadline_s, self.budget_s
        )
        # the socket timeouts end an abandoned attempt's thread no later than the deadline ends the attempt
        return httpx2.Client(transport=transport, timeout=httpx2.Timeout(self.deadline_s, connect=10.0))


class DeadlineExceeded(httpx2.ReadTimeout, KemeError):
    """An attempt ran past its wall-clock deadline (a timeout to the SDK, which retries it)."""


SPENT = "keme: the call's budget_s is spent"  # the stand-in reply's message when no time is left


def within(seconds: float, work: Callable[[], Any], request: Any) -> Any:
    """`work()`'s result if it ends within `seconds` of wall clock; else DeadlineExceeded. Abandoned work
    goes on in a daemon thread until its own socket timeout, and a reply it gets late is closed."""
    box: dict[str, Any] = {}
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
                result.close()  # nobody waits for it: give its connection back
        finally:
            done.set()

    threading.Thread(target=run, name="keme-llm-attempt", daemon=True).start()
    if not done.wait(seconds):
        with lock:
            if "result" not in box and "error" not in box:
                box["late"] = True
        if box.get("late"):
            raise DeadlineExceeded(f"no complete reply within the {seconds:g} s deadline", request=request)
        done.wait()  # it ended just now: take its outcome
    if "error" in box:
        raise box["error"]
    return box["result"]


class _MeteredTransport(httpx2.BaseTransport):
    """Wraps a transport: rewrites chat-completion requests (local dialect), bounds each attempt by a
    wall-clock deadline and each call (its first attempt and the SDK's retries of it, in one thread) by a
    budget, counts replies (readable or not) and retries."""

    def __init__(
        self,
        inner: Any,
        meter: Meter,
        rewrite: Rewrite | None,
        replies: Replies,
        deadline_s: float,
        budget_s: float = BUDGET_S,
    ):
        self.inner, self.meter, self.rewrite, self.replies = inner, meter, rewrite, replies
        self.deadline_s, self.budget_s = deadline_s, budget_s
        self.calls = threading.local()  # when the current call of this thread began

    def handle_request(self, request):
        now = time.monotonic()
        if _retry_count(request) == 0 or getattr(self.calls, "began", None) is None:
            self.calls.began = now
        left = self.budget_s - (now - self.calls.began)
        if left <= 0:
            # an answer the SDK does not retry (an exception it would, after its back-off, max_retries times)
            return httpx2.Response(
                504,
                headers={"x-should-retry": "false"},
                json={"error": {"message": f"{SPENT}: {self.budget_s:g} s", "type": "keme"}},
                request=request,
            )
        seconds = min(self.deadline_s, left)
        chat = request.method == "POST" and request.url.path.endswith("/chat/completions")
        if not chat:  # embeddings, model lists: bounded all the same
            return self._bounded(request, seconds)
        body = json.loads(request.read())
        if _retry_count(request) > 0 or self.replies.asks_again(body):
            self.meter.retried()
        if self.rewrite is not None:
            request = httpx2.Request(
                request.method,
                request.url,
                headers={k: v for k, v in request.headers.items() if k.lower() != "content-length"},
                content=json.dumps(self.rewrite(body)).encode(),
                extensions=request.extensions,
            )
        response = self._bounded(request, seconds)
        if response.status_code == 200:
            self._count(body, response.content)
        return response

    def _bounded(self, request, seconds: float):
        """The response, headers and body (whatever its status), read within `seconds` of wall clock."""
        started = time.monotonic()
        response = within(seconds, lambda: self.inner.handle_request(request), request)
        try:
            within(max(seconds - (time.monotonic() - started), 0.0), response.read, request)
        except BaseException:
            response.close()
            raise
        return response

    def _count(self, body: dict[str, Any], content: bytes) -> None:
        try:
            reply = json.loads(content)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self.meter.add(0, 0, unparseable=True)
            return
        usage = reply.get("usage") or {}
        readable = _safely(self.replies.readable, body, reply)
        self.meter.add(
            int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), not readable
        )

    def close(self) -> None:
        self.inner.close()


def _retry_count(request: Any) -> int:
    """Which attempt this is, as the openai SDK numbers them (0: the first)."""
    try:
        return int(request.headers.get("x-stainless-retry-count") or 0)
    except ValueError:
        return 0


def _safely(readable: Callable[[dict, dict], bool], body: dict, reply: dict) -> bool:
    """A reply check that fails on an odd reply says "unreadable" rather than breaking the call."""
    try:
        return bool(readable(body, reply))
    except Exception:  # noqa: BLE001 - the check reads what the model wrote: anything may be off
        return False


def reply_message(reply: dict[str, Any]) -> dict[str, Any]:
    """The first choice's message of a chat completion ({} when there is none)."""
    choices = reply.get("choices") or [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    return message if isinstance(message, dict) else {}


def local_dialect(
    request: dict[str, Any],
    *,
    schema: dict | None = None,
    force_tool: bool = False,
    avoid: tuple[str, ...] = (),
    max_chars: int | None = None,
) -> dict:
    """A request as llama.cpp's server understands it (see the module docstring).

    `schema`: a `json_object` reply is constrained to it (llama.cpp's `response_format.schema`).
    `force_tool`: with tools and no named tool_choice, one tool is named: the first whose name is not in
    `avoid`, else the first (llama.cpp constrains a named tool's arguments to its schema; for "auto" or
    "required" it lets the model write prose, and a 135M model never calls a tool by itself).
    `max_chars`: the named tool's string arguments are constrained to at most that many characters (a tiny
    model otherwise runs on inside a string until max_tokens cuts the reply, and the cut JSON is lost).
    """
    body = dict(request)
    if "max_completion_tokens" in body:
        body["max_tokens"] = body.pop("max_completion_tokens")
    fmt = body.get("response_format")
    if schema is not None and isinstance(fmt, dict) and fmt.get("type") == "json_object":
        body["response_format"] = {"type": "json_object", "schema": schema}
    tools = body.get("tools") or []
    if force_tool and tools and not isinstance(body.get("tool_choice"), dict):
        names = [tool["function"]["name"] for tool in tools]
        name = next((n for n in names if n not in avoid), names[0])
        body["tool_choice"] = {"type": "function", "function": {"name": name}}
        body.pop("parallel_tool_calls", None)
        if max_chars is not None:
            body["tools"] = [_bounded_tool(tool, name, max_chars) for tool in tools]
    return body


def _bounded_tool(tool: dict[str, Any], name: str, max_chars: int) -> dict[str, Any]:
    """`tool` with its string parameters bounded to `max_chars` if it is the named one."""
    function = tool.get("function") or {}
    if function.get("name") != name or not isinstance(function.get("parameters"), dict):
        return tool
    return {
        **tool,
        "function": {**function, "parameters": bounded_strings(function["parameters"], max_chars)},
    }


def bounded_strings(schema: Any, max_chars: int) -> Any:
    """A JSON schema whose strings without a maxLength get `max_chars` (a copy; other keywords kept)."""
    if isinstance(schema, list):
        return [bounded_strings(part, max_chars) for part in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: bounded_strings(value, max_chars) for key, value in schema.items()}
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = max_chars
    return out


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
        return Endpoint(local.url(), local.model, "no-key", local=True, host=local)
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
    """Fail now, naming the endpoint, when nothing answers there within PROBE_S of wall clock (any HTTP reply
    counts as alive)."""
    url = f"{base_url.rstrip('/')}/models"

    def look() -> None:
        with urllib.request.urlopen(url, timeout=PROBE_S):
            return

    try:
        within(PROBE_S, look, None)
    except urllib.error.HTTPError:
        return  # it answered: 401/404 are the library's to report
    except DeadlineExceeded as exc:
        raise KemeError(
            f"{system}: the OpenAI-compatible endpoint {base_url} sent no complete answer to GET /models "
            f"within {PROBE_S:g} s: check that the server is healthy, or fix the system's base_url parameter"
        ) from exc
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
        if name in ("APIConnectionError", "ConnectError"):
            died = _death(endpoint)
            if died is not None:
                return KemeError(f"{system}: {died}")
            return KemeError(
                f"{system}: the LLM endpoint {endpoint.where} did not answer in {endpoint.bound} "
                f"({name}: {str(seen)[:160]}): check that it is running and the system's base_url parameter"
            )
        status = getattr(seen, "status_code", None)
        if SPENT in str(seen) or name in (
            "APITimeoutError",
            "DeadlineExceeded",
            "ConnectTimeout",
            "ReadTimeout",
        ):
            return KemeError(
                f"{system}: the LLM endpoint {endpoint.where} gave no complete reply in {endpoint.bound} "
                f"({name}): a busy, dripping or too slow endpoint; raise the system's deadline_s, budget_s "
                "or max_retries parameters (--params), or give it a faster endpoint (base_url)"
            )
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


def _death(endpoint: Endpoint) -> str | None:
    """How the local endpoint's server died (e.g. killed for memory), when it did; None otherwise."""
    failure = getattr(endpoint.host, "failure", None)
    return failure() if endpoint.local and callable(failure) else None

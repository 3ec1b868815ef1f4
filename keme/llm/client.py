"""The LLM client every stage uses: cache first, then the provider with bounded retries.

Every attempt has a wall-clock deadline (`deadline_s`: connect and every read of however slow a reply),
and every call a total one (`budget_s`: all its attempts and back-off; no attempt runs past it). Retries
(timeouts, 429, 5xx) are bounded by `max_retries`, and none starts after `retry_budget_s` or with less than
MIN_ATTEMPT_S of the budget left. Only replies are cached, never failures, so a rerun after fixing the
endpoint asks again. The failure gate (keme.llm.health) turns a dead endpoint into an error
instead of a run of fallbacks.

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
from keme.llm.errors import CallFailed, FatalError, LLMError, RetryableError, Unreachable
from keme.llm.health import FailureSummary, Gate, check
from keme.llm.ledger import Ledger
from keme.llm.providers import Provider, make_provider, schema_instructions

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
MIN_ATTEMPT_S = 0.5  # a retry with less of the budget left than this would only fail again


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
    def __init__(
        self,
        config: LLMConfig,
        provider: Provider | None = None,
        cache: DiskCache | None = None,
        ledger: Ledger | None = None,
        sleep=time.sleep,
        clock=time.monotonic,
    ):
        self.config = config
        self._provider = provider
        self.cache = cache or DiskCache(config.cache_dir)
        self.ledger = ledger or Ledger()
        self.sleep, self.clock = sleep, clock
        self.in_flight = threading.BoundedSemaphore(config.max_in_flight)
        self.gate = Gate(config.max_consecutive_failures)

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = make_provider(self.config)
        return self._provider

    def _request(
        self, messages: list[dict[str, str]], params: dict[str, Any], schema: dict | None
    ) -> dict[str, Any]:
        kind = self.config.replay_of if self.config.provider == "replay" else self.config.provider
        return {
            "provider": kind,
            "model": self.config.model,
            "messages": messages,
            "params": params,
            "schema": schema,
        }

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        stage: str,
        schema: dict | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        params = {
            "temperature": self.config.temperature if temperature is None else temperature,
            "max_tokens": max_tokens or self.config.max_tokens,
            "seed": self.config.seed if seed is None else seed,
        }
        if (
            schema is not None
            and self.config.provider == "openai"
            and self.config.structured_output == "prompt"
        ):
            messages = messages + [{"role": "system", "content": schema_instructions(schema)}]
        request = self._request(messages, params, schema)
        key = request_key(request)
        hit = self.cache.get(key)
        if hit is not None:
            self.ledger.record(
                stage,
                prompt=hit["prompt_tokens"],
                completion=hit["completion_tokens"],
                latency=0.0,
                cached=True,
                price=None,
            )
            return Completion(hit["content"], hit["prompt_tokens"], hit["completion_tokens"], cached=True)
        response, latency = self._call(messages, params, schema, stage)
        self.cache.put(key, request, response)
        self.ledger.record(
            stage,
            prompt=response["prompt_tokens"],
            completion=response["completion_tokens"],
            latency=latency,
            cached=False,
            price=self.config.prices.get(self.config.model),
        )
        return Completion(
            response["content"], response["prompt_tokens"], response["completion_tokens"], cached=False
        )

    def _call(self, messages, params, schema, stage: str) -> tuple[dict[str, Any], float]:
        config = self.config
        # made (imports, the local model's start-up) before the budget's clock starts
        provider = self.provider
        prepare = getattr(provider, "prepare", None)
        if prepare is not None:
            try:
                prepare()
            except LLMError as exc:
                raise self._failed(
                    stage, exc if isinstance(exc, FatalError) else FatalError(str(exc)), exc, transient=False
                )
        begun = self.clock()
        ends = begun + config.budget_s  # the call's total: no attempt runs past it
        retries_end = begun + config.retry_budget_s  # no retry starts after it
        attempt = 0
        while True:
            started = time.perf_counter()
            timeout = min(config.deadline_s, ends - self.clock())
            try:
                with self.in_flight:
                    response = provider.complete(messages, params, schema, timeout=timeout)
            except Unreachable as exc:
                # a closed port or unknown host: known in seconds, not after retries
                if not self.gate.answered:
                    raise self._failed(
                        stage, FatalError(f"{exc}: is the server running? check llm.base_url"), exc
                    )
                error = exc
            except RetryableError as exc:
                error = exc
            except (CallFailed, FatalError) as exc:
                raise self._failed(stage, exc, exc, transient=False)
            else:
                self.gate.succeeded()
                return response, time.perf_counter() - started
            delay = min(config.backoff_max_s, config.backoff_base_s * 2**attempt) * random.uniform(0.5, 1.0)
            now = self.clock()
            if attempt >= config.max_retries or now + delay >= min(retries_end, ends - MIN_ATTEMPT_S):
                tries = f"{attempt + 1} attempt" + ("s" if attempt else "")
                raise self._failed(
                    stage,
                    CallFailed(
                        f"{error} (gave up after {tries} in {now - begun:.0f}s of the call's "
                        f"{config.budget_s:g}s budget; raise llm.deadline_s, llm.budget_s or llm.max_retries)"
                    ),
                    error,
                )
            self.sleep(delay)  # exponential backoff with jitter
            attempt += 1
            self.ledger.count(stage, "retries")

    def _failed(self, stage: str, error: LLMError, cause: BaseException, transient: bool = True) -> LLMError:
        self.ledger.count(stage, "failures")
        raised = self.gate.failed(error, transient)
        if raised is not cause:
            raised.__cause__ = cause
        return raised

    def unusable(self, stage: str) -> None:
        """A caller could not use a reply (e.g. an unreadable verdict): it counts against the failure
        fraction."""
        self.ledger.count(stage, "unusable")

    def check_failures(self, what: str = "the run") -> FailureSummary:
        """Raise (FatalError) when more than `llm.max_failure_fraction` of the requests failed or were
        unusable."""
        return check(self.ledger.as_dict(), self.config.max_failure_fraction, what)

    def close(self) -> None:
        """Stop what the provider runs (the local model's server); also done at exit."""
        close = getattr(self._provider, "close", None)
        if close is not None:
            close()

    def structured(self, messages: list[dict[str, str]], model: type[T], *, stage: str, **params: Any) -> T:
        """Ask for JSON matching `model`; parse and validate it."""
        completion = self.chat(messages, stage=stage, schema=model.model_json_schema(), **params)
        return parse_structured(completion.content, model)


def parse_structured(text: str, model: type[T]) -> T:
    cleaned = _FENCE.sub("", text.strip())
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise StructuredOutputError(
            f"the reply is not valid JSON ({exc.msg} at character {exc.pos})", text
        ) from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'root'}: {e['msg']}" for e in exc.errors()[:6]
        )
        raise StructuredOutputError(f"the JSON does not match the required shape: {problems}", text) from exc

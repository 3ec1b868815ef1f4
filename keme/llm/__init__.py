"""One LLM client for every stage: providers (OpenAI-compatible, local llama.cpp, replay), structured
output, an on-disk cache, bounded retries, a failure gate and per-stage accounting."""

from keme.llm.client import Completion, LLMClient, StructuredOutputError
from keme.llm.config import LLMConfig
from keme.llm.errors import CallFailed, FatalError, LLMError

__all__ = [
    "CallFailed",
    "Completion",
    "FatalError",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "StructuredOutputError",
]

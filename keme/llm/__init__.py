"""One LLM client for every stage: providers (OpenAI-compatible, local llama.cpp, replay), structured
output, an on-disk cache, bounded retries and per-stage accounting."""

from keme.llm.client import Completion, LLMClient, StructuredOutputError
from keme.llm.config import LLMConfig
from keme.llm.errors import LLMError

__all__ = ["Completion", "LLMClient", "LLMConfig", "LLMError", "StructuredOutputError"]

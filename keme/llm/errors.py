"""LLM failures, split by what the caller should do about them."""

from keme.errors import KemeError


class LLMError(KemeError):
    """A call failed and will not succeed by retrying (or retries ran out)."""


class RetryableError(LLMError):
    """Timeouts, rate limits (429), server errors (5xx), dropped connections: worth another try."""


class FatalError(LLMError):
    """401 / 403 / 404 and bad requests: retrying cannot help; the message says what to fix."""

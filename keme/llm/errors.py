"""LLM failures, split by what the caller should do about them.

- FatalError: stop the command now; retrying or carrying on cannot help (401/403/404, a bad request, an
  endpoint that never answered, a local model that died, too many failed calls). The message says what
  to fix.
- RetryableError: a transient problem (timeout, 429, 5xx, dropped connection); the client retries it
  within `llm.retry_budget_s`. Callers never see it.
- CallFailed: one call produced no reply (its retries ran out, or the model cannot take this request).
  Callers count it and carry on without a reply (a fallback, an answer left out); the client's failure
  gate decides when that has happened too often.

Every message is redacted (keme.llm.redact) when the error is made, so no key reaches a log or a file.
"""

from keme.errors import KemeError
from keme.llm.redact import redact


class LLMError(KemeError):
    """Base of every LLM failure; its message never holds a secret."""

    def __init__(self, message: str = ""):
        super().__init__(redact(str(message)))


class FatalError(LLMError):
    """Stop the command: the message says what to fix."""


class RetryableError(LLMError):
    """Timeouts, rate limits (429), server errors (5xx), dropped connections: worth another try."""


class Unreachable(RetryableError):
    """No connection at all (refused, unknown host, connect timeout): fatal unless the endpoint has answered
    before."""


class CallFailed(LLMError):
    """This call got no usable reply; the caller goes on without it (counted, never cached)."""


class LocalModelDied(FatalError):
    """The local model's server process exited or was killed by a signal."""

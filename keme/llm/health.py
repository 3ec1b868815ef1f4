"""Is the model answering? The failure gate every LLM client keeps, and the failure fraction of a run.

A failing model is an error, never a score: a benchmark run against a dead endpoint must not publish
0.000, and a synthesis against one must not quietly become procedural. So:

- a call that runs out of retries before the endpoint ever answered stops the command (it is down or
  misconfigured: nothing is gained by trying every other request first);
- `max_consecutive_failures` failed calls in a row stop it too (it went down mid-run);
- at the end, the share of requests that failed or gave unusable replies (e.g. an unreadable judge
  verdict) is printed, and the command fails above `max_failure_fraction`.

The fraction is computed from ledger figures (`Ledger.as_dict()`), so the CLI can apply the same rule
to what a manifest or an eval summary recorded.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from keme.llm.errors import CallFailed, FatalError, LLMError


@dataclass(frozen=True)
class FailureSummary:
    requests: int  # every request: answered by the model, served from the cache, or failed
    failed: int  # no reply (retries ran out, refused)
    unusable: int  # a reply came but could not be used (an unreadable verdict)

    @property
    def fraction(self) -> float:
        return (self.failed + self.unusable) / self.requests if self.requests else 0.0

    def describe(self, limit: float) -> str:
        return (
            f"LLM requests: {self.requests}, failed {self.failed}"
            + (f", unusable {self.unusable}" if self.unusable else "")
            + f" ({self.fraction:.1%}; the limit is {limit:.0%}, llm.max_failure_fraction)"
        )

    def as_dict(self, limit: float) -> dict:
        return {
            "requests": self.requests,
            "failed": self.failed,
            "unusable": self.unusable,
            "fraction": round(self.fraction, 4),
            "max_failure_fraction": limit,
        }


def summarize(stages: dict[str, dict]) -> FailureSummary:
    """Totals over a ledger's stages (`{stage: {calls, cache_hits, failures, unusable, ...}}`)."""
    calls = sum(s.get("calls", 0) + s.get("cache_hits", 0) + s.get("failures", 0) for s in stages.values())
    return FailureSummary(
        requests=calls,
        failed=sum(s.get("failures", 0) for s in stages.values()),
        unusable=sum(s.get("unusable", 0) for s in stages.values()),
    )


def check(stages: dict[str, dict], limit: float, what: str = "the run") -> FailureSummary:
    """Raise when the failure fraction is above `limit`; return the summary otherwise."""
    summary = summarize(stages)
    if summary.fraction > limit:
        raise FatalError(
            f"{summary.describe(limit)}: too many LLM calls failed for {what} to count; fix the endpoint "
            "(or the model's output format) and run the same command again: failed calls were not "
            "cached, so they are asked again"
        )
    return summary


class Gate:
    """Per client: stops the command when the endpoint is down, lets isolated failures through (counted)."""

    def __init__(self, max_consecutive: int):
        self.max_consecutive = max_consecutive
        self.answered = False  # the endpoint has answered at least once in this process
        self.consecutive = 0
        self.lock = threading.Lock()

    def succeeded(self) -> None:
        with self.lock:
            self.answered = True
            self.consecutive = 0

    def failed(self, error: LLMError, transient: bool) -> LLMError:
        """The error to raise for a failed call: the call's own (CallFailed), or a FatalError that stops."""
        with self.lock:
            if isinstance(error, FatalError):
                return error
            # the endpoint answered, it cannot take this request: not a sign that it is down
            if not transient:
                self.answered, self.consecutive = True, 0
                return error if isinstance(error, CallFailed) else CallFailed(str(error))
            self.consecutive += 1
            if not self.answered:
                return FatalError(
                    f"{error}; the endpoint has not answered a single request: check that it is "
                    "running and that llm.base_url points at it"
                )
            if self.consecutive >= self.max_consecutive:
                return FatalError(
                    f"{self.consecutive} LLM calls in a row failed, the last one: {error}; the endpoint "
                    "seems to be down (llm.max_consecutive_failures)"
                )
            return error if isinstance(error, CallFailed) else CallFailed(str(error))

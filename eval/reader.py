"""The LLM reader: answers a question from the memories a system retrieved, as of the question's time.

A call that fails raises (keme.llm.CallFailed, or FatalError to stop the run): an error text is never
an answer, so it is never logged, judged or cached as one, and a rerun asks again.
"""

from __future__ import annotations

from typing import Protocol

from eval.contract import Usage
from eval.prompts import render
from keme.llm import LLMClient
from keme.models import QAItem
from keme.text import lang as fmt


class Reader(Protocol):
    """Answers a question from a rendered context; `name` goes into the run's identity and reports."""

    name: str

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]: ...


class LLMReader:
    """A `Reader` that asks an LLM; the harness sizes its parallelism and reports its usage by `client`."""

    def __init__(
        self, client: LLMClient, max_context_chars: int = 6000, max_tokens: int = 96, persona_names=None
    ):
        self.client = client
        self.name = f"llm:{client.config.provider}:{client.config.model}"
        self.max_context_chars = max_context_chars
        self.max_tokens = max_tokens
        self.persona_names = persona_names or {}

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]:
        lang = question.language if question.language in ("en", "zh") else "en"
        if len(context) > self.max_context_chars:  # keep the newest part: contexts are in time order
            context = context[-self.max_context_chars :]
        prompt = render(
            f"reader.{lang}",
            name=self.persona_names.get(question.persona_id, "the user" if lang == "en" else "用户"),
            today=fmt.format_date(question.asked_at.date(), lang) + f" {question.asked_at.year}",
            context=context or "(none)",
            question=question.question,
            options=question.options,
        )
        completion = self.client.chat(
            [{"role": "user", "content": prompt}],
            stage="eval.reader",
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        usage = Usage(
            llm_calls=0 if completion.cached else 1,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
        )
        return completion.content.strip(), usage

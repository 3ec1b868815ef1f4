"""Reader and judge prompt templates (jinja2) under eval/prompts/.

Untrusted text (questions, a reader's answer, retrieved memories) reaches an LLM only quoted: a short
field as a JSON string (`quote`: no raw newline or unescaped quote can end it early), a long block between
content-derived delimiters (`fence`) that the block cannot contain. A forged "Gold answer:" line or a fake
closing fence in an answer therefore stays inside its quotes, and each template tells the model that quoted
text is data to read, never instructions to follow. Nothing is stripped: the text is kept whole.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from keme.text.quoting import BIDI_CONTROLS, fence, fence_tag, quote

__all__ = ["BIDI_CONTROLS", "environment", "fence", "fence_tag", "quote", "render"]

PROMPTS = Path(__file__).resolve().parent / "prompts"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS), undefined=jinja2.StrictUndefined, autoescape=False
    )
    env.filters["quote"] = quote
    env.filters["fence"] = fence
    return env


def render(template: str, **values) -> str:
    return environment().get_template(f"{template}.j2").render(**values).strip()

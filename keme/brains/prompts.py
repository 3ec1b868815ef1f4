"""Prompt templates (jinja2, one per role and language) under keme/prompts/."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from keme.text.quoting import fence, quote

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"


@functools.cache
def environment() -> jinja2.Environment:
    # plain-text prompts, not HTML: no autoescaping, and a missing variable is an error; text from a
    # dataset (an imported question, its facts, evidence messages) goes in through `quote` / `fence`
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
    )
    env.filters["quote"] = quote
    env.filters["fence"] = fence
    return env


def render(role: str, lang: str, **values) -> str:
    return environment().get_template(f"{role}.{lang}.j2").render(**values).strip()


def feedback(raw: str, problems: list[str], limit: int = 8) -> list[dict[str, str]]:
    """The turns that hand a refused reply back to the model with what was wrong with it (the ask /
    check / feedback loop of every LLM writer)."""
    return [
        {"role": "assistant", "content": raw[:3000]},
        {
            "role": "user",
            "content": "Your answer broke these rules:\n- "
            + "\n- ".join(problems[:limit])
            + "\nReply again with corrected JSON only.",
        },
    ]

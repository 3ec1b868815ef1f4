"""Reader and judge prompt templates (jinja2) under eval/prompts/."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

PROMPTS = Path(__file__).resolve().parent / "prompts"


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS), undefined=jinja2.StrictUndefined, autoescape=False
    )


def render(template: str, **values) -> str:
    return environment().get_template(f"{template}.j2").render(**values).strip()

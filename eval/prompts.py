"""Reader and judge prompt templates (jinja2) under eval/prompts/.

Untrusted text (questions, a reader's answer, retrieved memories) reaches an LLM only quoted: a short
field as a JSON string (`quote`: no raw newline or unescaped quote can end it early), a long block between
content-derived delimiters (`fence`) that the block cannot contain. A forged "Gold answer:" line or a fake
closing fence in an answer therefore stays inside its quotes, and each template tells the model that quoted
text is data to read, never instructions to follow. Nothing is stripped: the text is kept whole.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from pathlib import Path

import jinja2

PROMPTS = Path(__file__).resolve().parent / "prompts"


def _escaped(char: str) -> bool:
    """Characters a reader could take for a line break or a reordering (and lone surrogates, which cannot
    be sent as UTF-8): JSON-escaped even though json.dumps would keep them raw."""
    return unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or char in BIDI_CONTROLS


BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def quote(text: object) -> str:
    """`text` as one JSON string literal on one line; readable non-ASCII kept, any line break escaped."""
    encoded = json.dumps(str(text), ensure_ascii=False)
    return "".join(f"\\u{ord(c):04x}" if _escaped(c) else c for c in encoded)


def fence_tag(text: str, label: str = "DATA") -> str:
    """A delimiter derived from `text` that `text` does not contain (rehashed in the rare case it does)."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"{salt}:{text}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
        tag = f"{label}-{digest}"
        if tag not in text:
            return tag
        salt += 1


def fence(text: object, label: str = "DATA") -> str:
    """`text` between `<<<TAG` and `TAG>>>` lines, TAG derived from the text so the text cannot close it."""
    body = str(text)
    tag = fence_tag(body, label)
    return f"<<<{tag}\n{body}\n{tag}>>>"


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

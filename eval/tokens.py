"""Approximate token counts without downloading a tokenizer.

Every CJK character counts as one token, every other run of letters or digits
as one, punctuation as nothing. Close enough to compare context sizes across
systems; not a billing-grade count.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))

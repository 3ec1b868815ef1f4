"""Secrets out of error texts: an error body can echo the request, Authorization header included.

`redact` removes the values it is given (the configured key) and anything shaped like a credential:
Authorization headers, bearer tokens, `sk-...` keys, `api_key=...` pairs. Applied to every LLMError
message when it is made, so nothing downstream (logs, results, the terminal) can hold a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "[redacted]"
_PATTERNS = (
    # Authorization: Bearer xyz / 'authorization': 'Basic xyz' / authorization=xyz
    (
        re.compile(
            r"(?i)(\b(?:proxy-)?authorization\b['\"]?\s*[:=]\s*['\"]?)(?:(?:bearer|basic|token)\s+)?[^\s'\",;}\]]+"
        ),
        r"\1" + MASK,
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + MASK),
    (re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_-]{6,}"), r"\1-" + MASK),
    (re.compile(r"(?i)(\b(?:x-)?api[_-]?key\b['\"]?\s*[:=]\s*['\"]?)[^\s'\",;}\]&]+"), r"\1" + MASK),
)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=lambda s: (-len(s), s)):
        text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text

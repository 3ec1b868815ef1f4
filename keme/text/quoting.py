"""Untrusted text quoted for a prompt: a short field as one JSON string (`quote`), a long block between
delimiters derived from its content (`fence`). Text from a dataset, an import or a model's reply cannot end
its quotes early or forge a line of the prompt's own; nothing is stripped, so it is kept whole."""

from __future__ import annotations

import hashlib
import json
import unicodedata


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

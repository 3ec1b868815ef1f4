"""Memory Bank tokenization: lowercase `[a-z0-9_]+` for English and numbers, character bigrams for Chinese.

The seed names only these two scripts; other letters are dropped. A Chinese run
of one character is kept as a unigram (a bigram needs two).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9_]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if run[0].isascii():
            out.append(run)
        elif len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def keyword_term(keyword: str) -> str:
    """Keywords are indexed whole (not split): one term per keyword, lowercased and space-normalised."""
    return " ".join(keyword.lower().split())

"""Splitting text into tokens, and the CJK character classes, for every part of keme that needs either.

Chinese is written without spaces, so each tokenizer decides what a Chinese
"word" is. They differ on purpose, by what they serve:

- `search_terms`: search terms of the lexical memory systems (BM25 and the systems
  built on it): casefolded words and numbers; a run of Han characters becomes
  its character bigrams (a lone character stays a unigram).
- `memory_bank_terms`: the Memory Bank seed's own rule, kept exactly as the seed
  scores: lowercase `[a-z0-9_]+` and Han bigrams; every other letter is dropped.
- `approx_tokens` / `count_tokens`: an approximate LLM token count without
  downloading a tokenizer: every kana or Han character one token, every other
  run of letters or digits one, punctuation none. Close enough to compare
  context sizes across systems; not a billing-grade count.
- `shingles`: what two questions share, for the near-duplicate filter: the
  normalised words, or, in text with Han characters, the bigrams of the text
  with its spaces removed.
"""

from __future__ import annotations

import re

from keme.text.normalize import norm_text

HAN = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK unified ideographs, extension A, compatibility ideographs
)
KANA = "\u3040-\u30ff"  # hiragana and katakana

_HAN = re.compile(f"[{HAN}]")
_HAN_RUN = re.compile(f"[{HAN}]+")
_WORD = re.compile(r"[a-z0-9_]+|[^\W\d_a-z]+", re.UNICODE)
_MEMORY_BANK = re.compile(f"[a-z0-9_]+|[{HAN}]+")
_APPROX = re.compile(f"[{KANA}{HAN}]|[^\\W_]+", re.UNICODE)
# ASCII letters and digits kept, every other byte a space: in ASCII text, `_APPROX`'s tokens are the words
_ASCII_WORDS = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))


def has_han(text: str) -> bool:
    """Whether `text` holds a Han (Chinese) character."""
    return _HAN.search(text) is not None


def han_count(text: str) -> int:
    """How many Han characters `text` holds."""
    return len(_HAN.findall(text))


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def search_terms(text: str) -> list[str]:
    """Casefolded words and numbers; Han runs split into character bigrams (a lone character stays)."""
    out: list[str] = []
    lowered = text.casefold()
    position = 0
    for match in _HAN_RUN.finditer(lowered):
        out += _WORD.findall(lowered[position : match.start()])
        out += _bigrams(match.group(0))
        position = match.end()
    out += _WORD.findall(lowered[position:])
    return out


def memory_bank_terms(text: str) -> list[str]:
    """The Memory Bank seed's tokenization: lowercase `[a-z0-9_]+` for English and numbers, Han bigrams for
    Chinese.

    The seed names only these two scripts; other letters are dropped. A Chinese run of one character is kept
    as a unigram (a bigram needs two).
    """
    out: list[str] = []
    for run in _MEMORY_BANK.findall(text.lower()):
        out += [run] if run[0].isascii() else _bigrams(run)
    return out


def approx_tokens(text: str) -> list[str]:
    """The tokens `count_tokens` counts, casefolded (token F1 and BLEU-1 compare these)."""
    return _APPROX.findall(text.casefold())


def count_tokens(text: str) -> int:
    """Approximate LLM tokens: one per kana or Han character, one per other run of letters or digits.

    ASCII text (most English messages) is counted by a byte translation and split, a quarter of the regex's
    time, with the same count: the harness counts every context it builds.
    """
    if text.isascii():
        return len(text.encode("ascii").translate(_ASCII_WORDS).split())
    return len(_APPROX.findall(text))


def shingles(text: str) -> set[str]:
    """The normalised words of `text`; in text with Han characters, the bigrams of it without spaces."""
    normal = norm_text(text)
    if has_han(normal):
        compact = normal.replace(" ", "")
        return {compact[i : i + 2] for i in range(len(compact) - 1)}
    return set(normal.split())

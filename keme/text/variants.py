"""The sentences of a pattern line, as the variant banks key them, and the banks themselves.

keme/text/<lang>/variants.yaml and variants/*.yaml hold, for the exact text of a sentence (English) or
clause (Chinese) of a dialogue line, other wordings with the same slots. The realizer composes lines from
them (keme.synth.said); the coherence checker reads them to recognize a line in any of its wordings
(keme.world.check.presup). Both read the one splitting rule here.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

SPLIT = {
    "en": re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n+"),
    "zh": re.compile(r"[。！？；，,!?～…;\n]+"),
}
SLOT = re.compile(r"\{[^{}]*\}")
ROOT = Path(__file__).resolve().parent


def line_spans(source: str, lang: str) -> list[tuple[str, str]]:
    """`source` as (sentence, separator) pairs: cut at each sentence (or clause) end, every character
    kept, slots left whole. An English sentence keeps its end mark; a Chinese clause's mark is its
    separator."""
    splitter = SPLIT["zh" if lang == "zh" else "en"]
    guarded = SLOT.sub(lambda m: "\0" * len(m.group()), source)  # never cut inside a slot
    out, pos = [], 0
    for m in splitter.finditer(guarded):
        out.append((source[pos : m.start()], source[m.start() : m.end()]))
        pos = m.end()
    if pos < len(source):
        out.append((source[pos:], ""))
    return out


def lead(body: str) -> str:
    return body[: len(body) - len(body.lstrip())]


def trail(body: str) -> str:
    return body[len(body.rstrip()) :]


def spans_of(source: str, lang: str) -> list[str]:
    """The sentences of a pattern line as variants.yaml keys them (its exact text, trimmed)."""
    return [body.strip() for body, _ in line_spans(source, lang) if body.strip()]


def load_bank(lang: str, root: Path = ROOT) -> dict[str, list[str]]:
    """keme/text/<lang>/variants.yaml and variants/*.yaml (banks written apart, merged in name order):
    exact pattern sentence -> its other wordings ({} if none). A key in two files gets both lists."""
    paths = [root / lang / "variants.yaml", *sorted((root / lang / "variants").glob("*.yaml"))]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when built: a bank is large
    bank: dict[str, list[str]] = {}
    for path in (p for p in paths if p.exists()):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}  # noqa: S506 - a safe loader
        for key, wordings in data.items():
            bank.setdefault(str(key), []).extend(str(v) for v in wordings)
    return bank

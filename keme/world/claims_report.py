"""Does every number in the text come from the world? Digit runs that no claim of their message covers.

A user or assistant message's digit run ("141", "1,234.50", "14:05", the "4" and "20" of "4月20日") is
covered when it lies inside an occurrence, in the message, of one of the forms its claims' values are
said in (the value itself, and as money, day or time in the message's language). What is left is a
number a template wrote as a literal or drew without a name (`{num:2-5}`): text the world cannot vouch
for. `python -m keme.world.claims_report <dataset>` prints the counts per language.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from pathlib import Path

from keme.dataset import Dataset
from keme.models import Claim, Message
from keme.text import lang as fmt
from keme.world.ledger import parse_time

DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")


def said_forms(claim: Claim, lang: str) -> set[str]:
    """The strings `claim.value` can appear as in a message of language `lang`: the value itself (in
    English also without its own article, after a determiner, and capitalized, opening a sentence), an
    amount in the currency, a count with thousands commas ("10,000"), a day as the dialogue writes it
    ("March 4", "the 1st", "3月4日", "4号") and a clock time with or without its half of the day ("3:45 PM",
    "3:45", "3 PM", "15:45", "下午3点")."""
    value = claim.value
    forms = {value}
    if (
        lang == "en"
    ):  # "the {gift}" of "a houseplant" says "the houseplant" (keme.text.template.after_determiner)
        forms.add(re.sub(r"(?i)^(the|an?) (?=\w)", "", value, count=1))
        forms |= {f[:1].upper() + f[1:] for f in forms}  # a line that opens with the value capitalizes it
    try:
        forms |= _day_forms(date.fromisoformat(value), lang)
    except ValueError:
        pass
    moment = parse_time(value) if re.fullmatch(r"\d\d:\d\d", value) else None
    if moment is not None:
        forms |= _clock_forms(moment, lang)
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        try:
            forms.add(fmt.format_money(Decimal(value), lang))
        except InvalidOperation:
            pass
        if value.isdigit():
            forms.add(f"{int(value):,}")
        if claim.predicate == "duration_seconds":
            forms.add(fmt.format_duration(int(value), lang))
    return {f for f in forms if f}


def _day_forms(day: date, lang: str) -> set[str]:
    if lang == "zh":
        return {fmt.format_date(day, lang), f"{day.day}号", f"{day.day}日"}
    n = day.day
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return {fmt.format_date(day, lang), f"the {n}{suffix}"}


def _clock_forms(moment: time, lang: str) -> set[str]:
    hour12 = moment.hour % 12 or 12
    forms = {f"{moment.hour:02d}:{moment.minute:02d}", f"{moment.hour}:{moment.minute:02d}"}
    if lang == "zh":
        half = fmt.part_of_day(datetime.combine(date(2000, 1, 1), moment), lang)
        said = {f"{hour12}点" if moment.minute == 0 else f"{hour12}点{moment.minute}"}
        if moment.minute == 30:
            said.add(f"{hour12}点半")
        return forms | said | {half + form for form in said}
    forms |= {
        f"{hour12}:{moment.minute:02d}",
        fmt.format_time(datetime.combine(date(2000, 1, 1), moment), lang),
    }
    if moment.minute == 0:
        suffix = "AM" if moment.hour < 12 else "PM"
        forms |= {f"{hour12} {suffix}", f"{hour12} {suffix.lower()}"}
    return forms


def uncovered(message: Message, claims: list[Claim], lang: str) -> list[str]:
    """The digit runs of `message` that none of its claims' said forms covers."""
    spans: list[tuple[int, int]] = []
    text = message.content
    for claim in claims:
        for form in said_forms(claim, lang):
            start = text.find(form)
            while start >= 0:
                spans.append((start, start + len(form)))
                start = text.find(form, start + 1)
    return [
        m.group()
        for m in DIGITS.finditer(text)
        if not any(lo <= m.start() and m.end() <= hi for lo, hi in spans)
    ]


@dataclass
class CoverageReport:
    """Per language: digit runs in user/assistant text, and how many no claim covers."""

    digit_runs: Counter = field(default_factory=Counter)
    uncovered: Counter = field(default_factory=Counter)
    examples: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # lang -> (message id, run)

    def lines(self) -> list[str]:
        out = []
        for lang in sorted(self.digit_runs):
            total, left = self.digit_runs[lang], self.uncovered[lang]
            share = left / total if total else 0.0
            out.append(
                f"{lang}: {left} of {total} digit runs in user/assistant text have no claim ({share:.1%})"
            )
            for message_id, run in self.examples.get(lang, [])[:5]:
                out.append(f"    e.g. {run!r} in {message_id}")
        return out


def claims_report(dataset: Dataset, examples: int = 5) -> CoverageReport:
    """Digit coverage of a dataset's user and assistant messages by their claims."""
    report = CoverageReport()
    for view in dataset.views():
        lang = view.persona.language
        by_id = view.claims_by_id
        for session in view.sessions:
            for message in session.messages:
                if message.role == "system":
                    continue
                runs = DIGITS.findall(message.content)
                if not runs:
                    continue
                left = uncovered(message, [by_id[c] for c in message.claims if c in by_id], lang)
                report.digit_runs[lang] += len(runs)
                report.uncovered[lang] += len(left)
                shown = report.examples.setdefault(lang, [])
                for run in left[: max(0, examples - len(shown))]:
                    shown.append((message.id, run))
    return report


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m keme.world.claims_report <dataset directory>", file=sys.stderr)
        return 2
    for line in claims_report(Dataset.load(Path(argv[0]))).lines():
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

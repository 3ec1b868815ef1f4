"""Files in the field's published shapes at a realistic size, for the code paths a tiny fixture cannot reach
(a hard trajectory needs a haystack with room beside its evidence).

Built from the releases' data cards (LoCoMo's `locomo10.json`: `conversation.session_N` lists of
`{speaker, dia_id, text}` with `session_N_date_time`; LongMemEval's instances: `haystack_sessions` of
`{role, content, has_answer}` turns), never from keme's own exporters. The small published-shape
fixtures in `tests/fixtures/` give the questions; this adds the everyday sessions around them.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"

# everyday talk of two friends: a topic, then what each says about it ({a}/{b}: the speakers)
_TOPICS = [
    ("the garden", "The tomatoes finally came in, {b}.", "Nice, are you making sauce with them?"),
    ("a hike", "We did the ridge trail on Saturday, {b}.", "How long did it take you?"),
    ("a book", "I started a mystery novel by the lake, {b}.", "Is it any good so far?"),
    ("cooking", "I tried a new curry recipe last night, {b}.", "Too spicy or just right?"),
    ("the weather", "It rained all week here, {b}.", "Same here, the basement flooded a bit."),
    ("a concert", "We saw a jazz trio downtown, {b}.", "Was it crowded?"),
    ("work", "My manager moved our deadline up again, {b}.", "That sounds stressful, how are you coping?"),
    ("a pet", "The dog learned to open the back door, {b}.", "Ha, that's clever and a bit scary."),
    ("a movie", "We watched an old western on Friday, {b}.", "I haven't seen one in years."),
    ("a class", "The pottery class starts next month, {b}.", "Will you make mugs?"),
    ("a trip", "We're thinking about the coast in autumn, {b}.", "The coast is lovely that time of year."),
    ("the kids", "The kids built a fort out of boxes, {b}.", "That will keep them busy for a week."),
    ("running", "I ran five miles without stopping, {b}.", "That's a real milestone."),
    ("a museum", "The science museum has a new dinosaur wing, {b}.", "We should take the kids."),
    ("a neighbour", "Our neighbour brought over a lemon cake, {b}.", "That's so kind of them."),
    ("music", "I've been practising the guitar every evening, {b}.", "Which songs are you learning?"),
]
_REPLIES = [
    "Yes, and I want to do it again soon.",
    "Honestly it was better than I expected.",
    "Not yet, but I'll tell you how it goes.",
    "A little, but it was worth it.",
    "Maybe, we'll see how the month goes.",
    "I think so, thanks for asking.",
]


def _chat(rng: random.Random, a: str, b: str, number: int, turns: int) -> list[tuple[int, str]]:
    """(speaker 0 or 1, text): `a` and `b` are the names they call each other by ("" for none)."""

    def to(name: str) -> str:
        return f", {name}" if name else ""

    lines = [(0, f"Hi{to(b)}! It's been a few days, how are you?"), (1, "Good, busy week!")]
    for _, opener, question in rng.sample(_TOPICS, k=min(len(_TOPICS), turns // 3 + 1)):
        lines += [(0, opener.replace(", {b}", to(b))), (1, question), (0, rng.choice(_REPLIES))]
    return [*lines[:turns], (1, f"Talk soon{to(a)}! (chat {number})")]


def locomo(path: Path, sessions: int = 14, turns: int = 16, seed: int = 0) -> Path:
    """The published LoCoMo fixture with `sessions` everyday sessions added to each conversation after its
    own (which hold every question's evidence)."""
    rng = random.Random(seed)
    data = json.loads((FIXTURES / "locomo_published.json").read_text())
    for sample in data:
        conv = sample["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        own = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and k.count("_") == 1)
        last = datetime.strptime(conv[f"session_{own[-1]}_date_time"], "%I:%M %p on %d %B, %Y")
        for n in range(own[-1] + 1, own[-1] + 1 + sessions):
            last += timedelta(days=rng.randint(3, 12), minutes=rng.randint(0, 300))
            conv[f"session_{n}_date_time"] = last.strftime("%-I:%M %p on %-d %B, %Y").lower()
            pair = (a, b) if n % 2 else (b, a)
            conv[f"session_{n}"] = [
                {"speaker": pair[who], "dia_id": f"D{n}:{i}", "text": text}
                for i, (who, text) in enumerate(_chat(rng, *pair, n, turns), start=1)
            ]
    path.write_text(json.dumps(data, indent=1))
    return path


def longmemeval(path: Path, sessions: int = 14, turns: int = 12, seed: int = 0) -> Path:
    """The published LongMemEval fixture with `sessions` everyday sessions added to each haystack before the
    question's date."""
    rng = random.Random(seed)
    data = json.loads((FIXTURES / "longmemeval_published.json").read_text())
    for instance in data:
        first = min(datetime.strptime(d[:10], "%Y/%m/%d") for d in instance["haystack_dates"])
        for n in range(sessions):
            day = first - timedelta(days=3 * (sessions - n) + rng.randint(0, 2))
            chat = [(("user", "assistant")[who], text) for who, text in _chat(rng, "", "", n, turns)]
            instance["haystack_session_ids"].insert(n, f"filler_{instance['question_id']}_{n}")
            at = day.strftime("%Y/%m/%d (%a) ") + f"{rng.randint(8, 21):02d}:15"
            instance["haystack_dates"].insert(n, at)
            instance["haystack_sessions"].insert(
                n, [{"role": who, "content": text, "has_answer": False} for who, text in chat]
            )
    path.write_text(json.dumps(data, indent=1))
    return path

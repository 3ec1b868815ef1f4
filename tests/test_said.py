"""A year that does not repeat itself: the said memory and the clause-level variant banks (issue 36.4)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from keme.synth.said import CAP, Variants, bank_problems, dialogue_sources, sentences, template_key
from keme.synth.variety import THREAD, Style, Talk, exchange_lines, fresh
from keme.text import resources
from keme.text.resources import Exchange
from keme.text.template import Context, compile_template
from keme.text.variants import line_spans, load_bank, spans_of
from keme.world.check.base import clauses
from keme.world.cues import load_cues

EN_LINE = "Would {merchant} give me a discount if I asked? I feel like I spend a lot there."
ZH_LINE = "{merchant}附近吃饭的地方不少，要不要叫上{person}一起"


def _exchange(u: str, a: str) -> Exchange:
    return Exchange(compile_template(u), compile_template(a))


def _talk(lang: str, usage: Counter[str], variants: Variants) -> Talk:
    style = Style(THREAD, "casual")
    return Talk(resources.get(lang).parts, style, random.Random(1), usage, lang, variants=variants)


# -- the banks ------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_variant_key_is_a_sentence_of_a_dialogue_line_and_keeps_its_slots(lang):
    bank = load_bank(lang)
    assert len(bank) >= 100
    assert bank_problems(bank, dialogue_sources(resources.get(lang)), lang) == []


def test_a_key_that_is_no_sentence_of_a_line_is_named():
    bank = {"Would {merchant} give me a discount?": ["Could {merchant} knock something off?"]}
    assert bank_problems(bank, [EN_LINE], "en") == [
        "'Would {merchant} give me a discount?': not the exact text of a sentence of a dialogue line"
    ]


@pytest.mark.parametrize(
    ("lang", "line", "key", "wrong"),
    [
        ("en", EN_LINE, "Would {merchant} give me a discount if I asked?", "Would they give me a discount?"),
        ("zh", ZH_LINE, "{merchant}附近吃饭的地方不少", "{venue}附近吃饭的地方不少"),
    ],
)
def test_a_variant_whose_slots_differ_from_its_sentence_is_named(lang, line, key, wrong):
    problems = bank_problems({key: [wrong]}, [line], lang)
    assert len(problems) == 1 and "has slots" in problems[0]


@pytest.mark.parametrize(
    ("lang", "key", "wrong"),
    [
        (
            "en",
            "Mood check: solid {num:3-6@mood_score} out of ten today.",
            "A solid {num:3-6@mood_score}/10.",
        ),
        ("zh", "心情大概{num:3-6@mood_score}分吧", "心情{num:3-6@mood_score}分（满分10分）"),
    ],
)
def test_a_variant_that_says_a_number_with_a_literal_digit_is_named(lang, key, wrong):
    """The 10 of "5/10" is a number no claim covers: a variant says numbers through its slots, as its
    sentence does (keme.text.check.claim_problems)."""
    assert bank_problems({key: [wrong]}, [key], lang) == [
        f"{key!r}: variant {wrong!r} states a number with a literal digit"
    ]


# -- composing lines ------------------------------------------------------------------------------
def test_a_line_is_composed_sentence_by_sentence_from_its_variants_en():
    bank = Variants(
        {
            "Would {merchant} give me a discount if I asked?": [
                "Is it worth asking {merchant} for a discount?"
            ],
            "I feel like I spend a lot there.": ["Half my money goes there, it feels like."],
        },
        "en",
    )
    texts = [w.template.source for w in bank.wordings(EN_LINE)]
    assert texts == [
        EN_LINE,
        "Would {merchant} give me a discount if I asked? Half my money goes there, it feels like.",
        "Is it worth asking {merchant} for a discount? I feel like I spend a lot there.",
        "Is it worth asking {merchant} for a discount? Half my money goes there, it feels like.",
    ]


def test_a_line_is_composed_clause_by_clause_from_its_variants_zh():
    bank = Variants({"要不要叫上{person}一起": ["叫不叫{person}一块去"]}, "zh")
    texts = [w.template.source for w in bank.wordings(ZH_LINE)]
    assert texts == [ZH_LINE, "{merchant}附近吃饭的地方不少，叫不叫{person}一块去"]


@pytest.mark.parametrize(
    ("lang", "line", "key", "variant"),
    [
        ("en", EN_LINE, "I feel like I spend a lot there.", "Half my money goes there, it feels like."),
        ("zh", ZH_LINE, "要不要叫上{person}一起", "叫不叫{person}一块去"),
    ],
)
def test_the_least_said_wording_is_taken(lang, line, key, variant):
    bank = Variants({key: [variant]}, lang)
    said = Counter({template_key(key): 1})
    wording = bank.least_said(compile_template(line), said.__getitem__, random.Random(0).choice)
    assert variant in wording.template.source and key not in wording.template.source


def test_a_sentence_said_five_times_in_every_wording_is_left_out_of_its_line():
    line = "Happy to. The plan only works if you show up, so make day one easy."
    said = Counter({template_key("The plan only works if you show up, so make day one easy."): CAP})
    wording = Variants({}, "en").least_said(compile_template(line), said.__getitem__, random.Random(0).choice)
    assert wording.template.source == "Happy to."


def test_a_clause_left_out_passes_its_end_mark_to_the_one_before():
    line = "有这样的朋友真好，以后一定要好好谢谢人家。"
    said = Counter({template_key("以后一定要好好谢谢人家"): CAP})
    wording = Variants({}, "zh").least_said(compile_template(line), said.__getitem__, random.Random(0).choice)
    assert wording.template.source == "有这样的朋友真好。"


def test_a_sentence_said_five_times_that_carries_a_value_stays():
    line = "Got it. Your favorite platform is still {shopping.favorite_platform}, noted again."
    key = template_key("Your favorite platform is still {shopping.favorite_platform}, noted again.")
    wording = Variants({}, "en").least_said(
        compile_template(line), Counter({key: CAP}).__getitem__, random.Random(0).choice
    )
    assert wording.template.source == line


def test_a_wording_under_the_cap_is_taken_before_one_at_it():
    bank = Variants({"I feel like I spend a lot there.": ["Half my money goes there, it feels like."]}, "en")
    said = Counter(
        {
            template_key("I feel like I spend a lot there."): CAP,
            template_key("Half my money goes there, it feels like."): CAP - 1,
        }
    )
    wording = bank.least_said(compile_template(EN_LINE), said.__getitem__, random.Random(0).choice)
    assert "Half my money goes there" in wording.template.source


# -- the realizer's draws -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lang", "said", "new", "reply"),
    [
        (
            "en",
            "Can you log today's run for me?",
            "Please save the run I did today.",
            "Okay, it's in your log now.",
        ),
        ("zh", "帮我把今天跑步记一下吧", "今天跑的那次帮我存上", "好的，已经记到你的运动记录里了"),
    ],
)
def test_an_option_in_words_not_said_yet_is_preferred(lang, said, new, reply):
    options = (_exchange(said, reply), _exchange(new, reply + ("!" if lang == "en" else "！")))
    ctx = Context(lang=lang, rng=random.Random(0), persona={})
    usage = Counter({template_key(said): 1, template_key(reply): 1})
    lines = exchange_lines(_talk(lang, usage, Variants({}, lang)), options, ctx)
    assert lines is not None and lines[0].body == new


@pytest.mark.parametrize(
    ("lang", "u", "a"),
    [
        ("en", "Can you log today's run for me?", "Okay, it's in your log now."),
        ("zh", "帮我把今天跑步记一下吧", "好的，已经记到你的运动记录里了"),
    ],
)
def test_a_beat_whose_every_wording_was_said_has_nothing_fresh(lang, u, a):
    options = (_exchange(u, a),)
    ctx = Context(lang=lang, rng=random.Random(0), persona={})
    talk = _talk(lang, Counter({template_key(u): 1}), Variants({}, lang))
    assert not fresh(talk, options, ctx)
    assert fresh(_talk(lang, Counter(), Variants({}, lang)), options, ctx)


def test_a_said_line_with_an_unsaid_variant_stays_fresh():
    u, a = "Can you log today's run for me?", "Okay, it's in your log now."
    options = (_exchange(u, a),)
    ctx = Context(lang="en", rng=random.Random(0), persona={})
    talk = _talk(
        "en", Counter({template_key(u): 1}), Variants({u: ["Please put today's run in my log."]}, "en")
    )
    assert fresh(talk, options, ctx)
    lines = exchange_lines(talk, options, ctx)
    assert lines is not None and lines[0].body == "Please put today's run in my log."


# -- the rule the memory and the measure share ------------------------------------------------------
def test_english_sentences_of_six_words_or_more_are_counted():
    assert sentences("Okay. So I went to the store with Bob. It was fine!", "en") == [
        "So I went to the store with Bob."
    ]


def test_chinese_clauses_of_six_characters_or_more_are_counted():
    assert sentences("好的，我在日程后面给你加一条。谢谢", "zh") == ["我在日程后面给你加一条"]


def test_a_slot_is_never_cut_when_a_line_is_split():
    assert spans_of("Flights {money:320-480@f}. Landing {fact:1.5@h} hours later.", "en") == [
        "Flights {money:320-480@f}.",
        "Landing {fact:1.5@h} hours later.",
    ]


def test_a_wording_that_starts_with_a_value_keeps_its_capital_after_a_lead_in():
    key = "Food at {restaurant} was fine but the service was sloooow."
    bank = Variants({key: ["{restaurant} had decent food but sooo slow service."]}, "en")
    ctx = Context(lang="en", rng=random.Random(0), persona={}, slots={"restaurant": "Luca's Trattoria"})
    talk = _talk("en", Counter({template_key(key): 1}), bank)
    talk.opened = True  # a segue leads the line in
    texts = [talk.line(compile_template(key), "user", ctx, force=True).text for _ in range(6)]
    led = [t for t in texts if not t.startswith("Luca's")]
    assert led and all("Luca's Trattoria had decent food" in t for t in led)


def test_banks_written_apart_are_merged_in_name_order(tmp_path):
    split = tmp_path / "en" / "variants"
    split.mkdir(parents=True)
    (tmp_path / "en" / "variants.yaml").write_text('"Book the flights first.":\n  - "Flights come first."\n')
    (split / "b.yaml").write_text('"Book the flights first.":\n  - "Start with flights."\n')
    (split / "a.yaml").write_text('"Pack light.":\n  - "Bring as little as you can."\n')
    assert load_bank("en", tmp_path) == {
        "Book the flights first.": ["Flights come first.", "Start with flights."],
        "Pack light.": ["Bring as little as you can."],
    }


# the cues the coherence checker (keme/world/check) reads a line's place, time of day and objects' state from
CHECKED_CUES = (
    "office",
    "commute",
    "workday",
    "overtime",
    "remote",
    "arrival",
    "trip_day_one",
    "trip_return",
    "first_day_job",
    "broken",
    "working",
    "repaired",
)


# the cues that exempt a line from those readings (another day or a habit, overtime): a variant keeps them
EXEMPTING_CUES = ("other_day", "overtime")


def _cues_said(cues, text: str) -> set[str]:
    said = {name for name in CHECKED_CUES if cues.any(getattr(cues, name), text)}
    return said | {f"time:{cue.name}" for cue in cues.times if cues.any(list(cue.patterns), text)}


def _exempted(cues, text: str) -> set[str]:
    return {name for name in EXEMPTING_CUES if cues.any(getattr(cues, name), text)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_variant_says_no_place_time_or_state_its_sentence_does_not(lang):
    """Other words, same world: "Commuting by ferry" on a Saturday or 「午休」 at 08:07 would be a slip the
    sentence it rewords never makes (its presuppositions are declared for the sentence, not the variant)."""
    cues = load_cues(lang)
    added = [
        (key, wording, sorted(_cues_said(cues, wording) - _cues_said(cues, key)))
        for key, wordings in load_bank(lang).items()
        for wording in wordings
        if _cues_said(cues, wording) - _cues_said(cues, key)
    ]
    assert added == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_variant_of_a_sentence_about_another_day_or_a_habit_stays_one(lang):
    """平时只能下班后学 is a habit; a variant that drops the word the checker reads a habit or another day
    from would put the persona at work on the Saturday it is said."""
    cues = load_cues(lang)
    lost = [
        (key, wording)
        for key, wordings in load_bank(lang).items()
        for wording in wordings
        if _cues_said(cues, key) | _cues_said(cues, wording)
        and _exempted(cues, key) - _exempted(cues, wording)
    ]
    assert lost == []


def _now_reading(cues, line: str) -> set[str]:
    """What the checker reads of the moment from a whole line: the cues of its clauses that are not about
    another day or a habit (a clause runs to a full stop: one fragment's 「试试」 exempts its neighbours)."""
    return {cue for c in clauses(line) if not cues.any(cues.other_day, c) for cue in _cues_said(cues, c)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_variant_in_its_line_leaves_the_line_read_as_it_was(lang):
    """「那可以试试早上提前半小时，或者通勤路上…」 is advice; 「那不妨早上早起半小时学，或者通勤路上…」 drops
    the 试试 that made the whole clause advice, and puts the persona on a commute during a trip."""
    cues, bank = load_cues(lang), load_bank(lang)
    changed = []
    for line in dialogue_sources(resources.get(lang)):
        spans = line_spans(line, lang)
        before = _now_reading(cues, line)
        for i, (body, _) in enumerate(spans):
            for wording in bank.get(body.strip(), ()):
                varied = "".join((wording if j == i else b) + sep for j, (b, sep) in enumerate(spans))
                if gained := _now_reading(cues, varied) - before:
                    changed.append((body.strip(), wording, sorted(gained)))
    assert changed == []


def test_a_line_said_in_a_variant_wording_counts_as_said():
    """A reveal mention is said once whichever words carried it: its short slot sentence ("total {value}
    here.") counts nothing, its other sentence does, in any of its wordings."""
    line = "total {value} here. it's basically a personality trait at this point"
    bank = Variants(
        {"it's basically a personality trait at this point": ["at this point it's part of who I am"]}, "en"
    )
    said = Counter({template_key("at this point it's part of who I am"): 1})
    assert bank.ever_said(line, said.__getitem__)
    assert not bank.ever_said(line, Counter().__getitem__)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_variant_is_another_sentence_to_the_measure(lang):
    """A wording the repetition measure (keme.stats) reads as its source said again, but for one word or a
    short tail (挂了/约了{clinic}明天的号), adds no variety: the bank holds none."""
    from keme.stats import sentence_keys
    from keme.stats import sentences as counted
    from keme.text.variants import SLOT, load_bank

    def keys(text: str) -> set[str]:
        masked = SLOT.sub("<E>", text)
        fold = str.lower if lang == "en" else str
        return {k for s in counted(masked, lang) for k in sentence_keys(fold(s), lang)[1]}

    same = []
    for source, wordings in load_bank(lang).items():
        seen = [keys(source)]
        for wording in wordings:
            mine = keys(wording)
            if any(mine & other for other in seen):
                same.append((source, wording))
            seen.append(mine)
    assert same == []

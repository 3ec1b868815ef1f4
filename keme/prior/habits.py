"""A persona's habits: how she usually pays, where she goes back to, when she chats with the assistant.

Drawn once per persona from its own seeded stream, so the persona's attributes and everything drawn before
habits existed keep their values; the anchors (payments) and the planner (chat times) follow them.
"""

from __future__ import annotations

import random

from keme.days import BLOCKS, Block
from keme.models.attributes import IMMUTABLE_KEYS
from keme.models.persona import Habits, Persona
from keme.seeding import rng_for
from keme.text.resources import Resources
from keme.text.template import Context, compile_template, render

# where her sleep says nothing, the block she chats in: most people write to an assistant after work
CHAT_BLOCK_WEIGHTS: tuple[float, float, float] = (0.35, 0.3, 0.35)
# the chance of following a habit: enough that it holds a clear majority of a month (of a quarter's
# payments), never so much that every payment or chat looks the same
PAYMENT_SHARE = (0.65, 0.8)
CHAT_SHARE = (0.65, 0.8)
REGULAR_SHARE = (0.55, 0.75)


def payment_methods(persona: Persona, res: Resources, usual: bool = False) -> list[str]:
    """The persona's payment methods as a bill shows them (her bank's card, not "{finance.bank} card");
    with `usual`, those that fit any payment, her usual one among them (no online-only card for a coffee)."""
    values = {key: v for key in IMMUTABLE_KEYS if (v := persona.value_at(key, persona.start)) is not None}
    ctx = Context(lang=res.lang, rng=random.Random(0), persona=values, pools=res.flat_pools)
    bill = res.anchors.bill
    methods = (bill.usual_methods or bill.payment_methods) if usual else bill.payment_methods
    return [render(compile_template(m), ctx) for m in methods]


def chat_block(persona: Persona, res: Resources, rng: random.Random) -> Block:
    """The block she usually opens a chat in: the one her sleep habit implies (a night owl's evening, an
    early riser's morning), else a weighted draw."""
    sleep = persona.value_at("health.sleep_habit", persona.start)
    implied = res.persona.attributes["health.sleep_habit"].chat_block.get(sleep or "")
    drawn = rng.choices(BLOCKS, CHAT_BLOCK_WEIGHTS)[0]
    return implied or drawn


def draw_habits(persona: Persona, seed: int, res: Resources) -> Habits:
    """Her habits, deterministic from (seed, persona id); every draw is made whatever the outcome, so one
    habit never shifts another's stream."""
    rng = rng_for(seed, persona.id, "habits")
    categories = res.anchors.bill.categories
    with_regulars = [key for key in sorted(categories) if categories[key].regular]
    return Habits(
        payment_method=rng.choice(payment_methods(persona, res, usual=True)),
        payment_share=round(rng.uniform(*PAYMENT_SHARE), 2),
        chat_block=chat_block(persona, res, rng),
        chat_share=round(rng.uniform(*CHAT_SHARE), 2),
        regulars={key: rng.choice(categories[key].regular) for key in with_regulars},
        regular_share=round(rng.uniform(*REGULAR_SHARE), 2),
    )


def pick_payment_method(habits: Habits, methods: list[str], rng: random.Random) -> str:
    """The method one payment uses: her usual one `payment_share` of the time, another otherwise."""
    others = [m for m in methods if m != habits.payment_method]
    return habits.payment_method if rng.random() < habits.payment_share or not others else rng.choice(others)


def pick_merchant(habits: Habits, category: str, merchants: list[str], rng: random.Random) -> str:
    """The merchant one payment in `category` goes to: her regular there `regular_share` of the time, any
    merchant of the category otherwise (the regular among them)."""
    regular = habits.regulars.get(category)
    return regular if regular is not None and rng.random() < habits.regular_share else rng.choice(merchants)

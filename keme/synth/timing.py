"""When moments happen: day rules and day-part preferences, and the slot search that honours them."""

from __future__ import annotations

import random
from datetime import date, timedelta

from keme.days import BLOCKS, Block, Slot, is_workday
from keme.models.persona import Habits

# moment -> (day rule, weights for morning / afternoon / evening)
TIMING: dict[str, tuple[str, tuple[float, float, float]]] = {
    "work_deadline": ("workday", (0.35, 0.4, 0.25)),
    "work_meeting_prep": ("eve_of_workday", (0.5, 0.35, 0.15)),  # "a meeting tomorrow": not on a Friday
    "work_win": ("workday", (0.15, 0.5, 0.35)),
    "job_interview": ("workday", (0.2, 0.3, 0.5)),
    "first_day": ("workday", (0.25, 0.15, 0.6)),
    "health_followup": ("workday", (0.35, 0.5, 0.15)),
    "social_recap": ("any", (0.45, 0.3, 0.25)),
    "weekend_plan": ("before_weekend", (0.5, 0.3, 0.2)),  # "Saturday looks better": said before it
    "moving_day": ("offday", (0.3, 0.4, 0.3)),
    "apartment_hunt": ("any", (0.25, 0.35, 0.4)),
    "commute_talk": ("workday", (0.6, 0.05, 0.35)),
    "restaurant_pick": ("any", (0.15, 0.35, 0.5)),
    "family_call": ("any", (0.2, 0.3, 0.5)),
    "trip_packing": ("any", (0.05, 0.2, 0.75)),
    "recipe_help": ("any", (0.1, 0.25, 0.65)),  # a cook-along: "tonight", then the pan on the stove
}
DEFAULT_TIMING = ("any", (0.25, 0.3, 0.45))
# a moment given less than this chance in a block does not happen there by habit: no packing for a trip in
# the morning because she usually chats in the morning
HABIT_FLOOR = 0.15
# how many days a chat may move to fall in her usual block: further, and the moments after it lose their room
HABIT_REACH_DAYS = 1


def day_ok(rule: str, day: date, country: str) -> bool:
    """Whether `day` keeps a moment's day rule: `workday`, `offday`, `eve_of_workday` (a workday whose
    next day is one too: "the meeting is tomorrow"), `before_weekend` (Monday to Friday: a plan for the
    coming Saturday), `any`."""
    if rule == "workday":
        return is_workday(day, country)
    if rule == "eve_of_workday":
        return is_workday(day, country) and is_workday(day + timedelta(days=1), country)
    if rule == "before_weekend":
        return day.weekday() < 5
    if rule == "offday":
        return not is_workday(day, country)
    return True


def block_order(rng: random.Random, weights: tuple[float, float, float]) -> list[Block]:
    """Blocks in a weighted random order (most likely first)."""
    remaining = list(zip(BLOCKS, weights))
    order: list[Block] = []
    while remaining:
        pick = rng.choices(range(len(remaining)), [w for _, w in remaining])[0]
        order.append(remaining.pop(pick)[0])
    return order


def usual_block(
    rng: random.Random, habits: Habits | None, weights: tuple[float, float, float]
) -> Block | None:
    """Her usual chat block (keme.models.Habits) where this chat follows her habit: `chat_share` of the
    time, and only where the moment happens then (`HABIT_FLOOR`); else None, and the moment's own weights
    decide. Without her, every chat would spread over the day as the moments do, and no time of day would
    be hers."""
    if habits is None:
        return None
    follows = rng.random() < habits.chat_share
    fits = weights[BLOCKS.index(habits.chat_block)] >= HABIT_FLOOR
    return habits.chat_block if follows and fits else None


def candidate_days(lo: date, hi: date, target: date) -> list[date]:
    """Days in [lo, hi], nearest to `target` first (later before earlier on ties)."""
    span = (hi - lo).days
    days = [lo + timedelta(n) for n in range(span + 1)]
    return sorted(days, key=lambda d: (abs((d - target).days), d < target))


def slot_key(slot: Slot) -> tuple[date, int]:
    return slot[0], BLOCKS.index(slot[1])

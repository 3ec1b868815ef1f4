"""What can happen in a persona's life: episode kinds, their leaf moments, and life changes.

This is the contract between the planner (which picks episodes and fills
their params), the realizer (which turns a leaf moment into dialogue with the
pattern of the same name) and the text resources (which must only use the
slots a moment provides; `tests/test_text_resources.py` enforces it).
"""

from __future__ import annotations

from dataclasses import dataclass

from keme.models.anchor import APP_TYPES


@dataclass(frozen=True)
class EpisodeKind:
    """A level-1 event kind: the params the planner fills and the leaf moments it expands into.

    `moments` are tried in order; `optional` ones are dropped at random to vary
    episode length.
    """

    name: str
    params: tuple[str, ...]
    moments: tuple[str, ...]
    optional: tuple[str, ...] = ()
    days: tuple[int, int] = (1, 5)
    weight: float = 1.0
    requires: tuple[str, ...] = ()  # persona attributes that must exist (e.g. a pet)


@dataclass(frozen=True)
class Change:
    """A life change: which attributes get a new value and the episode that reveals it.

    `moments` expand the milestone episode; the moment at `update_index` carries
    the update message. `follow_ups` are changes the reviser schedules after
    this one is realized (a relocation changes the commute).
    """

    name: str
    attributes: tuple[str, ...]
    moments: tuple[str, ...]
    update_index: int
    params: tuple[str, ...] = ()
    follow_ups: tuple[str, ...] = ()
    requires_absent: tuple[str, ...] = ()
    days: tuple[int, int] = (3, 10)


EPISODE_KINDS: dict[str, EpisodeKind] = {
    kind.name: kind
    for kind in (
        EpisodeKind(
            "trip",
            ("destination", "attraction", "local_food", "companion", "start_date", "end_date", "nights"),
            ("trip_planning", "trip_packing", "trip_during", "trip_recap"),
            optional=("trip_packing",),
            days=(6, 12),
            weight=0.8,
        ),
        EpisodeKind(
            "work_project",
            ("project", "colleague", "deadline"),
            ("work_deadline", "work_meeting_prep", "work_win"),
            optional=("work_win",),
            days=(4, 12),
            weight=1.6,
        ),
        EpisodeKind(
            "health",
            ("symptom", "clinic", "remedy"),
            ("health_symptom", "health_followup"),
            days=(3, 9),
            weight=0.7,
        ),
        EpisodeKind("fitness", ("goal",), ("fitness_plan", "fitness_log"), days=(5, 14), weight=1.0),
        EpisodeKind(
            "social",
            (
                "person",
                "occasion",
                "venue",
                "restaurant",
                "gift",
                "gift_store",
                "gift_price",
                "gift_budget",
                "party_size",
                "budget_per_person",
                "dinner_total",
            ),
            ("gift_idea", "restaurant_pick", "social_recap"),
            optional=("gift_idea",),
            days=(3, 8),
            weight=1.2,
        ),
        EpisodeKind(
            "shopping",
            ("product", "product_category", "price", "store", "care"),
            ("purchase_compare", "purchase_done"),
            days=(2, 8),
            weight=0.9,
        ),
        EpisodeKind(
            "cooking",
            ("dish", "ingredient", "cooking_method", "steps"),
            ("recipe_help",),
            days=(1, 3),
            weight=0.9,
        ),
        EpisodeKind(
            "entertainment",
            ("title", "genre"),
            ("show_recommend", "show_discuss"),
            optional=("show_recommend",),
            days=(3, 10),
            weight=0.9,
        ),
        EpisodeKind(
            "finance", (), ("budget_review", "savings_plan"), optional=("savings_plan",), days=(2, 6)
        ),
        EpisodeKind("learning", ("resource",), ("learning_session",), days=(1, 4), weight=0.7),
        EpisodeKind("family", ("relative",), ("family_call",), days=(1, 3), weight=0.8),
        EpisodeKind("weekend", ("activity", "place", "venue"), ("weekend_plan",), days=(1, 3), weight=1.0),
        EpisodeKind("wellbeing", (), ("mood_checkin",), days=(1, 2), weight=0.6),
        EpisodeKind("tech", ("device", "issue"), ("tech_help",), days=(1, 3), weight=0.6),
        EpisodeKind(
            "pet", ("vet_clinic",), ("pet_care",), days=(1, 4), weight=0.8, requires=("pets.pet_name",)
        ),
    )
}

CHANGES: dict[str, Change] = {
    change.name: change
    for change in (
        Change(
            "job_change",
            ("career.company", "career.job_title"),
            ("job_interview", "job_offer", "first_day"),
            update_index=2,  # the company and title change on the first day, not at the offer
            params=("target_company", "target_title", "job_start_date"),
            follow_ups=("commute_change",),
            days=(10, 20),
        ),
        Change(
            "promotion",
            ("career.job_title",),
            ("work_win",),
            update_index=0,
            params=("project", "colleague", "deadline"),
        ),
        Change(
            "relocate",
            ("home.city", "home.neighborhood"),
            ("apartment_hunt", "moving_day"),
            update_index=1,
            params=("target_city", "target_neighborhood"),
            follow_ups=("commute_change", "gym_change"),
            days=(8, 16),
        ),
        Change(
            "commute_change",
            ("transport.commute_mode", "routine.commute_minutes"),
            ("commute_talk",),
            update_index=0,
            days=(2, 6),
        ),
        Change(
            "gym_change",
            ("sport.gym", "routine.training_per_week"),
            ("fitness_log",),
            update_index=0,
            params=("goal",),
            days=(2, 6),
        ),
        Change(
            "diet_change",
            ("diet.diet_type", "routine.usual_lunch"),
            ("recipe_help",),
            update_index=0,
            params=("dish", "ingredient", "cooking_method", "steps"),
        ),
        Change(
            "new_sport",
            ("sport.main_sport", "routine.training_per_week"),
            ("fitness_plan",),
            update_index=0,
            params=("goal",),
        ),
        Change(
            "new_phone",
            ("tech.phone",),
            ("purchase_compare", "purchase_done"),
            update_index=1,
            params=("product", "product_category", "price", "store", "care"),
        ),
        Change(
            "new_show",
            ("entertainment.favorite_show",),
            ("show_discuss",),
            update_index=0,
            params=("title", "genre"),
        ),
        Change("budget_change", ("finance.monthly_budget",), ("budget_review",), update_index=0),
        Change("savings_goal", ("finance.savings_goal",), ("savings_plan",), update_index=0),
        Change(
            "relationship",
            ("social_circle.partner",),
            ("date_talk",),
            update_index=0,
            requires_absent=("social_circle.partner",),
        ),
        Change(
            "adopt_pet",
            ("pets.pet_name", "pets.pet_species"),
            ("pet_adopt", "pet_care"),
            update_index=0,
            params=("vet_clinic",),
            requires_absent=("pets.pet_name",),
        ),
        Change(
            "new_course",
            ("learning.current_course",),
            ("learning_session",),
            update_index=0,
            params=("resource",),
        ),
    )
}

ANCHOR_MOMENTS: dict[str, str] = {app: f"anchor_{app}" for app in APP_TYPES}

ANCHOR_SLOTS: dict[str, tuple[str, ...]] = {
    "bill": ("merchant", "amount", "category", "payment_method"),
    "voice_memo": ("title", "duration", "transcript"),
    "calendar": ("title", "event_date", "event_time", "location", "attendees"),
    "note": ("title", "body"),
    "todo": ("title", "due_date", "priority", "list_name"),
    "screen": ("source_app", "title", "text"),
    "document": ("title", "doc_type", "pages", "summary"),
}


def all_moments() -> dict[str, frozenset[str]]:
    """Every leaf moment with the event params available to its pattern."""
    moments: dict[str, set[str]] = {}
    for kind in EPISODE_KINDS.values():
        for moment in kind.moments:
            moments.setdefault(moment, set()).update(kind.params)
    for change in CHANGES.values():
        for moment in change.moments:
            moments.setdefault(moment, set()).update(change.params)
    for app, moment in ANCHOR_MOMENTS.items():
        moments.setdefault(moment, set()).update(ANCHOR_SLOTS[app])
    return {name: frozenset(params) for name, params in moments.items()}

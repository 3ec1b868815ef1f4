"""Question generators, from leaf facts up to persona-level questions.

Leaves give single-hop questions about what one session states. Internal
nodes compose a sample of their children's questions into multi-hop and
temporal ones and summarise the episode or month. The root adds what needs the
whole trajectory: knowledge updates, preferences, relationships, abstention
and adversarial premises. Every draft carries the proof the verifier checks.

Split by seam into context, atoms, composition, episode, persona, adversarial; each part imports
only from those before it, and this package re-exports what other modules use.
"""

from __future__ import annotations

from keme.qa.generate.adversarial import abstentions, adversarials
from keme.qa.generate.atoms import (
    MONEY_ATTRS,
    NUMBER_ATTRS,
    PARAM_QUESTIONS,
    RECORD_PREDICATES,
    RECORD_QUESTIONS,
    RELATION_WORDS,
    SOCIAL_NAMES,
    attribute_atoms,
    leaf_drafts,
    param_atoms,
    record_atoms,
)
from keme.qa.generate.composition import EVENT_KINDS, compose_pairs, compose_single, landmarks
from keme.qa.generate.context import Gen
from keme.qa.generate.episode import (
    SALIENT,
    SUMMARY_KEYS,
    TOPIC_SLOTS,
    chapter_drafts,
    episode_drafts,
    quarter_totals,
)
from keme.qa.generate.persona import (
    GENERALIZABLE,
    _preference_options,
    generalizations,
    implicit_overall,
    knowledge_updates,
    life_changes,
    relationships,
)

__all__ = [
    "MONEY_ATTRS",
    "NUMBER_ATTRS",
    "SOCIAL_NAMES",
    "GENERALIZABLE",
    "PARAM_QUESTIONS",
    "RECORD_QUESTIONS",
    "RECORD_PREDICATES",
    "SUMMARY_KEYS",
    "SALIENT",
    "TOPIC_SLOTS",
    "EVENT_KINDS",
    "Gen",
    "attribute_atoms",
    "record_atoms",
    "param_atoms",
    "leaf_drafts",
    "compose_pairs",
    "compose_single",
    "episode_drafts",
    "landmarks",
    "quarter_totals",
    "chapter_drafts",
    "knowledge_updates",
    "implicit_overall",
    "_preference_options",
    "generalizations",
    "RELATION_WORDS",
    "relationships",
    "abstentions",
    "adversarials",
    "life_changes",
]

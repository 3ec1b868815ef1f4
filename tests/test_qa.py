"""QA synthesis: bottom-up items whose answers are proven from the trajectory."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, time, timedelta

import pytest
from conftest import ROOT

from keme.models import Quote
from keme.qa import build
from keme.qa.facts import World, world_of
from keme.qa.verify import Verifier, verify_items
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona
from keme.text.normalize import norm_text


def _world(traj) -> World:
    return world_of(traj.view())


@pytest.fixture(scope="module")
def year_built():
    cfg = load_config(ROOT / "configs/year.yaml")
    traj = synthesize_persona(0, cfg)
    world = _world(traj)
    report = build.QAReport()
    items = build.build_items(world, cfg.qa, cfg.seed, report)
    return cfg, traj, world, items, report


@pytest.fixture(scope="module")
def year(year_built):
    return year_built[:4]


def test_the_type_mix_is_the_configs_within_two_points(year_built):
    """Each type the candidates can fill is its config weight within 2 points, once the share of the types
    they cannot (reported in short_of_mix, with what was built) is given to the others in proportion."""
    cfg, _, _, items, report = year_built
    short = report.as_dict().get("short_of_mix", {})
    counts = Counter(i.type for i in items)
    assert {k: counts[k] for k in short} == {k: v["built"] for k, v in short.items()}
    left = 1 - sum(counts[k] for k in short) / len(items)
    weight = sum(w for k, w in cfg.qa.mix.items() if k not in short)
    for kind, w in cfg.qa.mix.items():
        if kind not in short:
            assert abs(counts[kind] / len(items) - w * left / weight) <= 0.02, kind


def test_multiple_choice_is_at_least_five_percent_of_a_year(year):
    items = year[3]
    assert sum(1 for i in items if i.format == "multiple_choice") / len(items) >= 0.05


def test_a_persona_year_yields_at_least_300_items(year):
    assert len(year[3]) >= 300


def test_every_type_is_at_least_four_percent(year):
    """Implicit preferences excepted (two at least): a habit is asked only where most of the period's
    payments or of the sessions she opened share a value (keme.days.clear_leader), and a persona-year
    holds a handful, not 4 %."""
    items = year[3]
    counts = Counter(i.type for i in items)
    for kind in (
        "single_hop",
        "multi_hop",
        "temporal_reasoning",
        "knowledge_update",
        "implicit_preference",
        "preference_generalization",
        "relationship",
        "summarization",
        "abstention",
        "adversarial",
    ):
        if kind == "implicit_preference":
            assert counts[kind] >= 2, (kind, counts[kind])
        else:
            assert counts[kind] / len(items) >= 0.04, (kind, counts[kind])


def test_knowledge_updates_ask_current_previous_and_history(year):
    subtypes = {i.subtype for i in year[3] if i.type == "knowledge_update"}
    assert {"knowledge_update.current", "knowledge_update.previous", "knowledge_update.history"} <= subtypes


def test_every_item_verifies(year):
    _, _, world, items = year
    assert verify_items(items, {world.persona.id: world}) == []


def test_questions_come_after_their_evidence(year):
    _, _, world, items = year
    for item in items:
        assert all(world.messages[m].timestamp <= item.asked_at for m in item.evidence)


def test_a_share_of_questions_is_asked_mid_trajectory(year):
    _, traj, _, items = year
    mid = [i for i in items if i.asked_at <= traj.persona.end]
    assert 0.1 <= len(mid) / len(items) <= 0.5


def test_no_question_of_a_year_is_asked_at_night(year):
    """Mid-trajectory and final items alike fall in the persona's chat hours, which start at 07:00."""
    _, _, world, items = year
    first, last = world.chat_hours
    assert first >= time(7, 0)
    assert [i.id for i in items if not first <= i.asked_at.time() <= last] == []


def test_composed_items_name_their_sub_questions_and_hops(year):
    items = year[3]
    ids = {i.id for i in items}
    composed = [i for i in items if i.sub_questions]
    assert composed
    for item in composed:
        assert set(item.sub_questions) <= ids
        assert item.hops >= 1
    assert any(i.hops >= 2 for i in items if i.type == "multi_hop")


def test_multi_hop_items_span_at_least_two_sessions(year):
    spans = [len(i.evidence_sessions) for i in year[3] if i.type == "multi_hop"]
    assert sum(1 for s in spans if s >= 2) / len(spans) > 0.8


def test_choice_formats_carry_options_and_a_letter(year):
    choices = [i for i in year[3] if i.format == "single_choice"]
    assert choices
    for item in choices:
        assert item.spec.kind == "choice" and item.spec.value in "ABCD"[: len(item.options)]


def test_corrupting_an_amount_flags_exactly_the_items_that_depend_on_it(year):
    cfg, traj, _, items = year
    world = _world(traj)
    bill_id, amount = next(
        (q.message_id, q.text)
        for i in items
        if i.subtype == "bill.amount"
        for q in i.proof.quotes
        if q.text and q.text.startswith("$")
    )
    bill = world.messages[bill_id]
    dependent = {
        i.id
        for i in items
        if any(q.message_id == bill.id and q.text and amount in q.text for q in i.proof.quotes)
    }
    world.messages[bill.id] = bill.model_copy(update={"content": bill.content.replace(amount, "$999.99")})
    flagged = {r.item_id for r in verify_items(items, {world.persona.id: world})}
    assert dependent and flagged == dependent


def test_an_abstention_target_that_appears_is_flagged(year):
    _, traj, _, items = year
    world = _world(traj)
    item = next(i for i in items if i.type == "abstention" and i.proof.args.terms)
    message = world.sessions[0].messages[1]
    world.messages[message.id] = message.model_copy(
        update={"content": message.content + " " + item.proof.args.terms[0]}
    )
    world.__dict__.pop("corpus", None)
    assert [r.reason for r in Verifier(world).check(item)] == ["unsupported"]


def test_a_question_that_contains_its_answer_is_a_leak(year):
    _, traj, world, items = year
    item = next(i for i in items if i.spec.kind == "entity")
    leaky = item.model_copy(update={"question": f"{item.question} ({item.spec.value}?)"})
    assert "leak" in [r.reason for r in Verifier(world).check(leaky)]


def test_a_quote_that_is_not_in_its_message_is_unsupported(year):
    _, _, world, items = year
    item = next(i for i in items if i.proof.quotes)
    forged = item.model_copy(
        update={
            "proof": item.proof.model_copy(
                update={
                    "quotes": [Quote(message_id=item.proof.quotes[0].message_id, text="never said this")]
                    + item.proof.quotes[1:]
                }
            )
        }
    )
    assert [r.reason for r in Verifier(world).check(forged)] == ["unsupported"]


def test_asking_before_the_evidence_is_rejected(year):
    _, traj, world, items = year
    item = next(i for i in items if i.evidence)
    early = item.model_copy(update={"asked_at": datetime(2000, 1, 1)})
    assert "unsupported" in [r.reason for r in Verifier(world).check(early)]


def test_duplicates_are_rejected_and_counted(year):
    cfg, _, world, _ = year
    drafts = build.candidates(world, cfg.qa, cfg.seed)
    report = build.QAReport()
    kept = build.filter_drafts(drafts + drafts[:5], world, report)
    assert report.rejected["duplicate"] >= 5
    assert len(kept) < len(drafts)


def test_both_languages_get_questions(tmp_path):
    from keme.cli import synthesize_dataset
    from keme.synth.limits import parse_config

    cfg = parse_config(
        "name: l\nseed: 2\npersonas:\n  - {language: zh, start: 2026-01-01, months: 2}\n"
        "  - {language: en, start: 2026-01-01, months: 2}\n"
    )
    manifest = synthesize_dataset(cfg, tmp_path / "d")
    assert manifest.stats["qa_by_language"]["zh"] > 40 and manifest.stats["qa_by_language"]["en"] > 40


def test_qa_stage_alone_reproduces_the_synthesized_items(tmp_path, sample_config):
    import subprocess
    import sys

    from keme.cli import synthesize_dataset

    synthesize_dataset(sample_config, tmp_path / "d")
    before = (tmp_path / "d/qa.jsonl").read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "keme.cli", "qa", str(tmp_path / "d")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "d/qa.jsonl").read_bytes() == before


def test_a_year_counts_payments_over_a_quarter_too(year):
    """Four payments a month leave few repeats in a month: a regular place is counted over a quarter."""
    items = year[3]
    quarterly = [
        i for i in items if i.subtype in ("mh.count_merchant", "mh.total_category") and "–" in i.question
    ]
    assert quarterly and all(i.proof.args.start.month in (1, 4, 7, 10) for i in quarterly)


def test_a_month_recap_asked_as_multiple_choice_offers_other_months_points(year):
    """ "What happened in my April?" with wrong options that are the points of her other months, phrased
    as April's are."""
    import random

    from keme.qa import phrasing
    from keme.qa.generate import Gen
    from keme.qa.generate.episode import recap_points

    _, _, world, items = year
    g = Gen(world, phrasing.get(world.lang), random.Random(0), 0.3)
    chapters = [e for e in world.graph.events if e.depth == 0]
    recaps = [i for i in items if i.subtype == "sum.month" and i.format == "multiple_choice"]
    assert recaps
    for item in recaps:
        own = next(c for c in chapters if c.id == item.node)
        elsewhere = {p.text for c in chapters if c.id != own.id for p in recap_points(g, c)}
        wrong = [o for o in item.options if o not in item.spec.items]
        assert wrong and set(wrong) <= elsewhere, item.question


def _big_changes(cfg, world):
    [changes] = [d for d in build.candidates(world, cfg.qa, cfg.seed) if d.subtype == "sum.changes"]
    return changes


def test_the_big_changes_of_a_year_are_life_changes_as_a_person_names_them(year):
    """ "senior product manager" or a new favourite show is no point of "what were the big changes?";
    "became a senior product manager" is."""
    cfg, traj, world, _ = year
    changes = _big_changes(cfg, world)
    minor = {
        v.value
        for k in ("entertainment.favorite_show", "tech.phone")
        for v in traj.persona.attribute(k).versions
    }
    assert len(changes.spec.items) >= 2
    for point in changes.spec.items:
        assert point.split()[0] in ("became", "moved", "started", "adopted", "went", "took"), point
        assert not any(value in point for value in minor), point


def test_a_wrong_option_of_the_big_changes_is_a_change_she_never_mentioned(year):
    cfg, _, world, _ = year
    said = "\n".join(m.content for m in world.messages.values())
    wrong = _big_changes(cfg, world).distractors
    assert wrong
    for option in wrong:
        assert option.split(" ")[-1] not in said, option


@pytest.fixture(scope="module")
def year_candidates(year):
    cfg, _, world, _ = year
    return build.candidates(world, cfg.qa, cfg.seed)


def test_a_value_at_a_time_is_asked_of_a_whole_month_it_held_not_of_a_day(year, year_candidates):
    """ "What was my main sport on January 11?" names a day nothing happened on; "back in March" is how a
    person dates a time of life, and the whole month has one answer."""
    _, traj, _, _ = year
    asked = [d for d in year_candidates if d.subtype == "knowledge_update.at_time"]
    assert asked
    for draft in asked:
        assert "back in " in draft.question and not any(
            ch.isdigit() for ch in draft.question.split("back in ")[1][:-6]
        )
        at = draft.proof.args.at
        at = at if isinstance(at, datetime) else datetime.fromisoformat(at)
        attr = traj.persona.attribute(draft.proof.args.key)
        first = at.replace(day=1)
        month = [first + timedelta(days=n) for n in range(28)]
        held = {attr.version_at(day).value for day in month}
        assert len(held) == 1 and held == {draft.proof.quotes[0].text}, draft.question


def test_a_landmark_anchors_a_time_of_life_never_a_routine(year_candidates):
    """ "What was my usual lunch when I went to Asheville?" ties a routine to an unrelated trip."""
    keys = {
        d.subtype.removeprefix("mh.attr_at_event.")
        for d in year_candidates
        if d.subtype.startswith("mh.attr_at_event.")
    }
    assert keys
    assert not {k for k in keys if k.startswith(("routine.", "entertainment."))}


def test_a_regular_place_is_where_most_of_a_categorys_payments_go(year, year_candidates):
    _, _, world, _ = year
    regular = [d for d in year_candidates if d.subtype.startswith("imp.regular.")]
    assert regular
    for draft in regular:
        category = draft.proof.args.category
        merchants = Counter(
            a.record.merchant
            for a in world.anchors.values()
            if a.app == "bill"
            and a.record.category == category
            and draft.proof.args.start <= a.timestamp.date() <= draft.proof.args.end
        )
        assert merchants.most_common(1)[0][0] == draft.spec.value
        assert 2 * merchants[draft.spec.value] > sum(merchants.values())


def test_a_friends_birthday_comes_up_at_one_time_of_the_year(year):
    """A note, a calendar entry and a to-do each naming her best friend's birthday in another month gave
    the friend several birthdays a year: a person's birthday is talked about within a few weeks."""
    _, traj, _, _ = year
    for key in ("social_circle.best_friend", "social_circle.sibling"):
        for version in traj.persona.attribute(key).versions:
            said = sorted(
                m.timestamp
                for s in traj.sessions
                for m in s.messages
                if m.role in ("user", "system") and f"{version.value}'s birthday" in m.content
            )
            if said:
                assert (said[-1] - said[0]).days <= 60, (version.value, said[0], said[-1])


def test_an_occasion_asked_by_relation_names_the_relation_not_the_person(year, year_candidates):
    """ "For my brother's housewarming, which restaurant did we pick?": who the relation is, then where."""
    _, _, world, _ = year
    asked = [d for d in year_candidates if d.subtype == "mh.occasion_with_relation"]
    assert asked
    for draft in asked:
        name = draft.proof.quotes[1].text
        assert name not in draft.question
        assert draft.spec.value in world.messages[draft.proof.quotes[0].message_id].content


def test_no_wrong_option_of_a_preference_is_something_she_says_she_does(year, year_candidates):
    """A basketball player who logs "yoga and mobility this evening" is not offered yoga as the wrong
    class to book: it would be right too."""
    _, _, world, _ = year
    said = "\n".join(line for _, line in world.user_lines)
    for draft in year_candidates:
        if draft.subtype.startswith("gen."):
            for option in draft.distractors:
                assert norm_text(option) not in said or draft.spec.value in option, (draft.question, option)


def test_no_category_total_over_a_payment_she_said_was_not_her_own(year, year_candidates):
    """ "这笔别记成话费宽带，实际上是替同事带的": the Wallet's total and hers differ, so none is asked."""
    _, _, world, _ = year
    retold = {
        world.session_of[c.message_id] for c in world.claims if c.predicate == "purpose" and c.value != "own"
    }
    for draft in year_candidates:
        if draft.subtype == "mh.total_category":
            assert not {world.session_of[q.message_id] for q in draft.proof.quotes} & retold, draft.question


def test_the_merchants_paid_in_a_month_are_every_merchant_of_its_payment_records(year):
    _, _, world, items = year
    paid = [i for i in items if i.subtype == "mh.paid_month"]
    assert paid
    for item in paid:
        query = item.queries[0]
        merchants = {
            a.record.merchant
            for a in world.anchors.values()
            if a.app == "bill" and query.start <= a.timestamp.date() <= query.end
        }
        right = set(item.spec.items)
        assert right == merchants, item.question
        assert not (set(item.options) - right) & merchants  # a wrong option was paid in another month only


def test_an_attribute_at_a_landmark_is_asked_only_where_it_has_changed_since(year):
    """ "Which neighborhood did I live in during the report?" of where she still lives is no question."""
    _, _, world, items = year
    asked = [i for i in items if i.subtype.startswith("mh.attr_at_event.")]
    assert asked
    for item in asked:
        key = item.subtype.removeprefix("mh.attr_at_event.")
        now = world.persona.attribute(key).version_at(item.asked_at)
        assert now is not None and now.value != item.proof.quotes[-1].text, item.question


def test_how_long_she_weighed_a_purchase_is_asked_a_few_times_a_year(year):
    assert Counter(i.subtype for i in year[3])["tmp.purchase_span"] <= 3


def test_who_a_gift_was_for_is_asked_only_of_a_gift_no_other_session_names(year):
    """A memo saying "Mom's lipstick is ordered" made "who was the lipstick for?" a two-answer question."""
    _, _, world, items = year
    asked = [i for i in items if i.subtype == "rel.gift_for"]
    assert asked
    for item in asked:
        gift = item.queries[0].where["gift"]
        about = {
            f.session_id
            for f in world.facts
            if f.kind == "social" and f.context.get("person") == item.spec.value
        }
        naming = {world.session_of[m.id] for m in world.messages.values() if gift in m.content}
        assert naming <= about, item.question

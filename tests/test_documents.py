"""Talk about a document says only what it holds: the generator draws a line only for a document whose
profile has what the line presupposes (keme.synth.documents, `presup: {doc: }`), repeats the document's
own numbers, and the checker (keme.world.check.documents) reads the document's text on its own and names a
line that takes a signature, a deadline or contract language for granted, or denies one the text has."""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from keme.dataset.views import PersonaView
from keme.models import Anchor, Event, EventGraph, Message, Persona, Session
from keme.models.anchor import DocumentRecord
from keme.synth.documents import features, figures, item_of
from keme.synth.presup import Moment, holds
from keme.text import resources
from keme.text.presup import PresupError, parse
from keme.text.template import Context, compile_template, render
from keme.world.catalog import Catalog
from keme.world.check import check_world
from keme.world.check.documents import problems
from keme.world.cues import load_cues

PERSONA = {"tech.laptop": "ASUS Zenbook", "finance.bank": "Chase", "basic_info.hometown": "岳阳"}
AT = datetime(2026, 4, 10, 10, 0)


def _drawn(item, lang: str, seed: int) -> tuple[DocumentRecord, dict[str, str]]:
    """A record of `item` as build_anchors renders it, and the named quantities its summary drew."""
    held: dict[str, str] = {}
    ctx = Context(
        lang=lang,
        rng=random.Random(seed),
        persona=PERSONA,
        pools=resources.get(lang).flat_pools,
        recall=lambda predicate, draw: held.setdefault(predicate, draw()),
    )
    record = DocumentRecord(
        title=render(compile_template(item.title), ctx),
        doc_type=item.doc_type,
        pages=item.pages[0],
        summary=render(compile_template(item.summary), ctx),
    )
    return record, held


def _anchor(record: DocumentRecord) -> Anchor:
    return Anchor(
        id="p01-a001", persona_id="p01", app="document", app_name="Files", timestamp=AT, record=record
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_document_is_found_again_with_the_numbers_its_summary_states(lang):
    res = resources.get(lang)
    for item in res.anchors.document.items:
        for seed in range(4):
            record, held = _drawn(item, lang, seed)
            assert item_of(record, res) is item
            assert figures(_anchor(record), res) == held


def test_a_document_holds_its_profile_and_its_length():
    res = resources.get("en")
    lease = next(i for i in res.anchors.document.items if i.doc_type == "lease")
    record, _ = _drawn(lease, "en", 1)
    assert features(_anchor(record.model_copy(update={"pages": 8})), res) == {
        "deadline",
        "sign",
        "legal",
        "money",
        "rent",
        "multi",
        "long",
    }
    assert "multi" not in features(_anchor(record.model_copy(update={"pages": 1})), res)


def _moment(doc: frozenset[str] | None) -> Moment:
    persona = Persona(id="p01", name="Ann Lee", language="en", country="US", start=AT, end=AT, dimensions={})
    return Moment(start=AT, end=AT, events=(), params={}, persona=persona, doc=doc)


def test_a_line_about_a_signature_is_drawn_only_for_a_document_to_sign():
    sign, no_sign = parse({"doc": "sign"}), parse({"doc": "!sign"})
    assert holds(sign, _moment(frozenset({"sign", "legal"})))
    assert not holds(sign, _moment(frozenset({"money", "payroll"})))
    assert holds(no_sign, _moment(frozenset({"money", "payroll"})))
    assert not holds(sign, _moment(None))


def test_an_unknown_document_feature_is_refused():
    with pytest.raises(PresupError):
        parse({"doc": "notarized"})


PAY_STUB = DocumentRecord(
    title="Pay stub",
    doc_type="pay stub",
    pages=1,
    summary="Net pay of $3,120 for the two-week period; $240 went to the 401(k) and $95 to health insurance.",
)
LEASE = DocumentRecord(
    title="Lease renewal agreement",
    doc_type="lease",
    pages=8,
    summary="Renews the lease for 12 months at $2,450 per month. It has to be signed within 21 days.",
)
CARD_BILL = DocumentRecord(
    title="信用卡电子账单", doc_type="对账单", pages=3, summary="本期账单¥4200，最后还款日是每月18日。"
)
CERTIFICATE = DocumentRecord(
    title="线上课程结业证书", doc_type="证书", pages=1, summary="完成32课时线上课程，考核优秀。"
)


@pytest.mark.parametrize(
    "record,text,lang,what",
    [
        (
            PAY_STUB,
            "Check the last couple of pages; that's where signature lines usually are.",
            "en",
            "signature",
        ),
        (PAY_STUB, "Explain it like I'm not a lawyer.", "en", "contract language"),
        (LEASE, "Nothing flagged as a hard deadline in the summary.", "en", "denies a deadline"),
        (PAY_STUB, "Yes — I'll search inside 'Pay stub', all 1 pages.", "en", "plural"),
        (CERTIFICATE, "扫了一下，末尾有需要确认的部分。签之前把涉及金额的条款再看一遍。", "zh", "签字"),
        (CARD_BILL, "这份没有要赶的时间，不急，放着备查就行。", "zh", "denies 截止时间"),
        (CERTIFICATE, "帮大忙了，1页我自己得看到半夜", "zh", "long read"),
    ],
)
def test_a_line_the_document_does_not_bear_out_is_named(record, text, lang, what):
    assert any(what in p for p in problems(text, record, lang))


@pytest.mark.parametrize(
    "record,text,lang",
    [
        (PAY_STUB, "Do I need to sign or send anything back?", "en"),  # a question only asks
        (PAY_STUB, "Nothing to sign or send back. Keep it with your records.", "en"),
        (PAY_STUB, "Only if you need to sign on paper or bring it somewhere in person.", "en"),
        (LEASE, "Explain it like I'm not a lawyer.", "en"),
        (LEASE, "One that matters: it has to be signed within 21 days.", "en"),
        (CARD_BILL, "不用签字，但有个日子要记着：最后还款日是每月18日。", "zh"),
        (CERTIFICATE, "有需要我签字或者回复的地方吗", "zh"),
    ],
)
def test_a_line_true_of_the_document_passes(record, text, lang):
    assert problems(text, record, lang) == []


def test_the_coherence_check_names_a_session_that_denies_the_lease_s_deadline():
    persona = Persona(id="p01", name="Ann Lee", language="en", country="US", start=AT, end=AT, dimensions={})
    leaf = Event(
        id="p01-c01-e01",
        parent_id="p01-c01",
        depth=1,
        kind="anchor_document",
        title="",
        summary="",
        start=AT,
        end=AT,
        params={},
    )
    chapter = Event(
        id="p01-c01", parent_id=None, depth=0, kind="chapter", title="April", summary="", start=AT, end=AT
    )
    lines = [
        ("system", "Lease renewal agreement · lease · 8 pages"),
        ("user", "Any dates or deadlines in there I should know about?"),
        ("assistant", "Nothing flagged as a hard deadline in the summary, but skim the last page."),
    ]
    messages = [
        Message(
            id=f"p01-s0001-m{k:02d}",
            role=role,
            content=text,
            timestamp=AT,
            app="Files" if role == "system" else None,
        )
        for k, (role, text) in enumerate(lines, 1)
    ]
    session = Session(
        id="p01-s0001",
        persona_id="p01",
        event_id=leaf.id,
        language="en",
        pattern="anchor_document",
        start=AT,
        end=AT,
        messages=messages,
        anchor_id="p01-a001",
    )
    view = PersonaView(
        persona,
        graph=EventGraph(persona_id="p01", events=[chapter, leaf], edges=[]),
        sessions=[session],
        anchors=[_anchor(LEASE)],
    )
    found = [f for f in check_world(view, Catalog(), load_cues("en")) if f.rule == "documents"]
    assert [f.message_ids for f in found] == [["p01-s0001-m03"]]
    assert "denies a deadline" in found[0].text

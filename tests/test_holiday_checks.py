"""The calendar check on holidays (keme.world.check.calendar): rent or a utility paid on a public holiday, and
a holiday named as the moment's business far from its real date; each defect put back, en and zh, with the
look-alikes that must pass."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from test_world_check import END, START, event, findings, ids, session, world

from keme.models import Anchor
from keme.models.anchor import BillRecord

# ------------------------------------------------------------------------------------------ bills on days off


def dated_bill(anchor_id: str, when: datetime, merchant: str, category: str, currency: str) -> Anchor:
    record = BillRecord(
        merchant=merchant,
        amount=Decimal("3200.00"),
        currency=currency,
        category=category,
        payment_method="card",
    )
    return Anchor(
        id=anchor_id, persona_id="p01", app="bill", app_name="Wallet", timestamp=when, record=record
    ).sealed()


@pytest.mark.parametrize(
    "lang, when, merchant, category, flagged",
    [
        ("zh", datetime(2026, 2, 16, 10, 5), "房东转账", "住房物业", True),  # 除夕
        ("en", datetime(2026, 12, 25, 9, 40), "Xfinity", "Bills & Utilities", True),  # Christmas Day
        # look-alikes: rent on a working day or paid in the app on a Sunday; a dinner on 除夕 is no payment
        # to an account
        ("zh", datetime(2026, 2, 13, 10, 5), "房东转账", "住房物业", False),
        ("zh", datetime(2026, 3, 1, 10, 5), "房东转账", "住房物业", False),
        ("zh", datetime(2026, 2, 16, 19, 5), "海底捞", "餐饮", False),
        ("en", datetime(2026, 12, 25, 13, 0), "Target", "Shopping", False),
    ],
)
def test_rent_or_a_utility_paid_on_a_public_holiday_is_named(lang, when, merchant, category, flagged):
    currency = "CNY" if lang == "zh" else "USD"
    view = world(
        lang,
        [event("p01-c01-e07", "anchor_bill", when, when + timedelta(hours=1))],
        [
            session(
                "p01-s0001",
                "p01-c01-e07",
                [("system", when, f"{merchant} {category}")],
                lang,
                anchor_id="p01-a001",
            )
        ],
        anchors=[dated_bill("p01-a001", when, merchant, category, currency)],
    )
    found = [f for f in findings(view, "calendar") if "public holiday" in f.text]
    assert ids(found) == ([["p01-s0001-m01"]] if flagged else [])


# -------------------------------------------------------------------------------- holidays at their season


@pytest.mark.parametrize(
    ("lang", "when", "text", "flagged"),
    [
        # year-zh seed 1: going home for 春节 two weeks after it (2026-02-17)
        ("zh", datetime(2026, 3, 3, 20, 10), "过年回家，我堂弟吴凯说要来车站接我", True),
        ("zh", datetime(2026, 6, 20, 11, 0), "今年的月饼得早点订，不然又抢不到", True),  # 中秋 is 09-25
        (
            "en",
            datetime(2026, 8, 12, 19, 0),
            "Christmas party at the office is next Friday, what do I wear",
            True,
        ),
        ("en", datetime(2026, 4, 2, 18, 30), "Thanksgiving dinner is at my sister's this year", True),
        # look-alikes: near the day, of an earlier year, or of another day
        ("zh", datetime(2026, 2, 10, 20, 10), "过年回家，我堂弟吴凯说要来车站接我", False),
        ("zh", datetime(2026, 6, 20, 11, 0), "去年过年回家，我堂弟来车站接的我", False),
        ("zh", datetime(2026, 10, 11, 15, 0), "等年货节吧，反正也不急", False),
        ("zh", datetime(2026, 6, 4, 9, 0), "明天要给老板过年中经营分析会材料", False),
        ("en", datetime(2026, 8, 12, 19, 0), "Last Christmas we drove up to see my parents", False),
        (
            "en",
            datetime(2026, 12, 10, 19, 0),
            "Christmas party at the office is next Friday, what do I wear",
            False,
        ),
    ],
)
def test_a_holiday_named_far_from_its_real_date_is_named(lang, when, text, flagged):
    view = world(
        lang,
        [event("p01-c01-e01", "mood_checkin", START, END)],
        [session("p01-s0001", "p01-c01-e01", [("user", when, text)], lang)],
    )
    found = [f for f in findings(view, "calendar") if "days from" in f.text]
    assert ids(found) == ([["p01-s0001-m01"]] if flagged else [])

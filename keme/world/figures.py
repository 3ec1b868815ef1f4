"""Computed figures: what the assistant says it counted or added up, computed from the app records.

"Counting this one, 4 charges this month", 「水电燃气本月累计大概¥35」: a count, a total, a share or a
difference the assistant states is computed from the persona's bill records at that moment, never drawn
from a range. A line that needs a figure the records cannot give (a month-over-month rise when spending
fell, a last month before the trajectory began) is not drawn (`unsayable`). Amounts are said rounded to
the whole unit ("about"). The checker recomputes them on its own (keme.world.check.values).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

from keme.models import Anchor
from keme.models.anchor import BillRecord

Figure = Callable[["Records"], str | None]
Recall = Callable[[str, Callable[[], str]], str]


class Records:
    """The bill records a session can see: those up to `now`, the one it is about (`bill`, or None)."""

    def __init__(
        self,
        anchors: Iterable[Anchor],
        now: datetime,
        current: Anchor | None,
        since: date,
        until: datetime | None = None,
    ):
        self.now = now
        self.since = since  # the first day the persona's records cover
        every = [(a.timestamp, a.record) for a in anchors if isinstance(a.record, BillRecord)]
        self.bills = [(t, r) for t, r in every if t <= now]
        # a record arriving while the session runs (`now` to `until`) leaves its figures unsettled
        self.settled = until is None or not any(now < t <= until for t, _ in every)
        self.bill = current.record if current is not None and isinstance(current.record, BillRecord) else None

    def month(self, first: date, last: date) -> list[BillRecord]:
        return [r for t, r in self.bills if first <= t.date() <= last]

    def this_month(self) -> list[BillRecord]:
        return self.month(self.now.date().replace(day=1), self.now.date())

    def last_month_to_date(self) -> list[BillRecord] | None:
        """Last month's bills up to the same day of the month, or None when the records do not reach back."""
        today = self.now.date()
        first = (today.replace(day=1) - _DAY).replace(day=1)
        if first < self.since:
            return None
        end_of_last = today.replace(day=1) - _DAY
        return self.month(first, min(end_of_last, first.replace(day=min(today.day, end_of_last.day))))


_DAY = date(2000, 1, 2) - date(2000, 1, 1)


def _whole(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def _total(bills: list[BillRecord]) -> Decimal:
    return sum((b.amount for b in bills), Decimal(0))


def _category_count(r: Records) -> str | None:
    """This month's charges of the bill's category, this one included ("Counting this one, 3"): said only
    when there are others."""
    if r.bill is None:
        return None
    count = sum(1 for b in r.this_month() if b.category == r.bill.category)
    return str(count) if count >= 2 else None


def _today_count(r: Records) -> str | None:
    """Today's charges so far (「今天第3笔了」): said only when this is not the first."""
    if r.bill is None:
        return None
    count = sum(1 for t, _ in r.bills if t.date() == r.now.date())
    return str(count) if count >= 2 else None


def _category_total(r: Records) -> str | None:
    if r.bill is None:
        return None
    return _whole(_total([b for b in r.this_month() if b.category == r.bill.category]))


def _category_share(r: Records) -> str | None:
    if r.bill is None:
        return None
    month = r.this_month()
    share = _total([b for b in month if b.category == r.bill.category]) * 100 / _total(month)
    return _whole(share) if share < 99 else None  # "about 100% of the month" is no share


def _method_total(r: Records) -> str | None:
    if r.bill is None:
        return None
    return _whole(_total([b for b in r.this_month() if b.payment_method == r.bill.payment_method]))


def _rise(r: Records) -> str | None:
    before = r.last_month_to_date()
    if before is None:
        return None
    rise = _total(r.this_month()) - _total(before)
    return _whole(rise) if rise >= 1 else None  # "spent X more than last month": only when it is more


def _rise_percent(r: Records) -> str | None:
    before = r.last_month_to_date()
    if not before:
        return None
    percent = (_total(r.this_month()) - _total(before)) * 100 / _total(before)
    return _whole(percent) if percent >= 1 else None


# predicate -> how the records give it
FIGURES: dict[str, Figure] = {
    "bill_count_month": _category_count,  # "How many {category} charges this month?"
    "bill_count_today": _today_count,  # 「这是今天第几笔了」
    "category_month_total": _category_total,
    "category_month_share_percent": _category_share,
    "payment_method_month_total": _method_total,
    "month_over_month_increase": _rise,
    "month_over_month_percent": _rise_percent,
}


def figures_at(records: Records) -> dict[str, str]:
    """Every figure the records give at this moment (predicate -> canonical value)."""
    out: dict[str, str] = {}
    if not records.settled:
        return out
    for predicate, figure in FIGURES.items():
        value = figure(records)
        if value is not None:
            out[predicate] = value
    return out


def figures_first(figures: dict[str, str], recall: Recall | None) -> Recall:
    """`recall`, except that a computed figure says what the records give."""

    def inner(predicate: str, draw: Callable[[], str]) -> str:
        if predicate in figures:
            return figures[predicate]
        return recall(predicate, draw) if recall is not None else draw()

    return inner


def unsayable(predicates: Iterable[str], figures: dict[str, str]) -> bool:
    """Whether a line naming `predicates` needs a figure the records do not give now."""
    return any(p in FIGURES and p not in figures for p in predicates)

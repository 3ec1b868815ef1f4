"""The language resources honour the contract of the synthesis catalogue.

Each failure lists the file and key to fix (see keme/text/FORMAT.md).
"""

from __future__ import annotations

import pytest

from keme.text import check, resources


@pytest.mark.parametrize("lang", resources.LANGUAGES)
@pytest.mark.parametrize("part", check.PARTS)
def test_resource_part_is_valid(lang: str, part: str) -> None:
    problems = check.check(lang, (part,))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_at_least_twenty_dialogue_patterns(lang: str) -> None:
    assert len(resources.get(lang).patterns) >= 20

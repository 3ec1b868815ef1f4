"""A preference is applied only to a situation that holds for the persona when asked: a playlist for the
drive is asked of a driver, a dog walk of a dog owner, a dinner across town of someone who can get there."""

from __future__ import annotations

from datetime import datetime

import pytest
import yaml

from keme.models import Attribute, AttributeVersion, Persona
from keme.qa.phrasing import Situation
from keme.qa.phrasing import get as phrasing
from keme.qa.situations import holds
from keme.text.resources import ROOT

START = datetime(2026, 1, 1)
ASKED = datetime(2026, 3, 10, 20)


def _persona(lang: str = "en", **held: str | list[tuple[str, datetime]]) -> Persona:
    """A persona holding each attribute (`transport__commute_mode="e-bike"`) from the start, or the values
    it changed through (`[(value, from), ...]`)."""
    dimensions: dict[str, dict[str, Attribute]] = {}
    for name, value in held.items():
        key = name.replace("__", ".")
        dimension, attr = key.split(".", 1)
        changes = [(value, START)] if isinstance(value, str) else value
        versions = [AttributeVersion(value=v, valid_from=at, evidence=[]) for v, at in changes]
        dimensions.setdefault(dimension, {})[attr] = Attribute(key=key, mutable=True, versions=versions)
    return Persona(
        id="p01",
        name="Maya",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=START,
        end=datetime(2026, 12, 31),
        dimensions=dimensions,
    )


def _asked(persona: Persona, key: str, when: datetime = ASKED) -> list[str]:
    """The situations of the generalization `key` that may be asked of the persona at `when`."""
    situations = phrasing(persona.language).text.generalize[key].situations
    return [s.text for s in situations if holds(s, persona, when)]


DRIVE = {
    "en": "Put on a playlist for my drive. Which one would I like?",
    "zh": "待会儿要开车，路上放个歌单，放哪个我会喜欢？",
}
DOG_WALK = {
    "en": "I'm taking the dog out for a long walk. Which playlist should I put on?",
    "zh": "待会儿带狗出去遛一大圈，给我放哪个歌单？",
}
ACROSS_TOWN = "周四晚上约了朋友在城市另一头吃饭，我多半怎么过去？"


def test_a_persona_who_commutes_by_e_bike_is_never_asked_about_her_drive():
    rider = _persona(transport__commute_mode="e-bike", pets__pet_species="corgi")
    assert DRIVE["en"] not in _asked(rider, "entertainment.music_genre")


def test_a_persona_who_rides_an_e_bike_to_work_is_never_asked_about_driving_in_chinese():
    rider = _persona("zh", transport__commute_mode="骑电动车")
    assert DRIVE["zh"] not in _asked(rider, "entertainment.music_genre")


@pytest.mark.parametrize(("lang", "mode"), [("en", "car"), ("zh", "开车")])
def test_a_persona_who_drives_to_work_may_be_asked_about_her_drive(lang, mode):
    driver = _persona(lang, transport__commute_mode=mode)
    assert DRIVE[lang] in _asked(driver, "entertainment.music_genre")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_persona_without_a_pet_is_never_asked_about_walking_the_dog(lang):
    assert DOG_WALK[lang] not in _asked(_persona(lang), "entertainment.music_genre")


def test_a_cat_owner_is_never_asked_about_walking_the_dog():
    assert DOG_WALK["en"] not in _asked(_persona(pets__pet_species="tabby cat"), "entertainment.music_genre")


@pytest.mark.parametrize(("lang", "dog"), [("en", "beagle"), ("zh", "柯基")])
def test_a_dog_owner_may_be_asked_about_walking_the_dog(lang, dog):
    assert DOG_WALK[lang] in _asked(_persona(lang, pets__pet_species=dog), "entertainment.music_genre")


def test_a_persona_who_walks_to_work_is_not_asked_how_she_crosses_the_city():
    walker = _persona("zh", transport__commute_mode="步行")
    assert ACROSS_TOWN not in _asked(walker, "transport.commute_mode")


def test_a_company_shuttle_is_not_how_anyone_gets_to_dinner_across_town():
    shuttle = _persona("zh", transport__commute_mode="坐公司班车")
    assert ACROSS_TOWN not in _asked(shuttle, "transport.commute_mode")


def test_a_presupposition_is_judged_at_the_time_the_question_is_asked():
    sold_the_car = _persona(transport__commute_mode=[("car", START), ("e-bike", datetime(2026, 6, 1))])
    assert DRIVE["en"] in _asked(sold_the_car, "entertainment.music_genre", datetime(2026, 5, 1))
    assert DRIVE["en"] not in _asked(sold_the_car, "entertainment.music_genre", datetime(2026, 7, 1))


def test_a_situation_without_a_presupposition_holds_for_anyone():
    assert holds(Situation(text="Pick background music for my dinner party."), _persona(), ASKED)


def test_a_situation_may_presuppose_only_what_the_persona_holds():
    with pytest.raises(ValueError, match="presupposes only"):
        Situation(text="Put on something for my evening.", presup={"part": "evening"})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_presupposed_state_names_values_the_persona_can_hold(lang):
    values = {
        key: set(spec.get("values") or [])
        for key, spec in yaml.safe_load((ROOT / lang / "persona.yaml").read_text("utf-8"))[
            "attributes"
        ].items()
    }
    for generalization in phrasing(lang).text.generalize.values():
        for situation in generalization.situations:
            state = situation.presumes.state
            if state is not None:
                assert state[1] <= values[state[0]], situation.text

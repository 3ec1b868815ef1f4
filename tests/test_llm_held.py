"""The LLM brain is given the values the world holds and is held to them (issue 12, build 6).

keme.world.held reads free text back: a held value it writes becomes a claim like a template's, and a
count that disagrees with the world goes back to the model. A scripted provider stands in for the model.
"""

from __future__ import annotations

import re

from conftest import small_config
from llm_doubles import ScriptedProvider
from test_llm_brain import LLM, brain_for

from keme.synth.pipeline import synthesize_persona
from keme.world.cues import load_cues
from keme.world.held import Held, disagreements, said

PARTY = Held("party_size", "6", "6", "num", "event", "people at the meal")
TOTAL = Held("dinner_total", "431", "$431", "money", "event", "what the meal came to")


def test_a_held_amount_and_a_stated_head_count_are_read_back_as_reports():
    reports = said("Booked a table for 6, and the bill will be about $431.", [PARTY, TOTAL], load_cues("en"))
    assert {(r.kind, r.name, r.value) for r in reports} == {
        ("num", "party_size", "6"),
        ("money", "dinner_total", "431"),
    }


def test_a_bare_number_two_held_counts_share_is_claimed_for_neither():
    nights = Held("nights", "6", "6", "num", "event", "nights away")
    assert said("Maybe 6 is right.", [PARTY, nights], load_cues("en")) == []


def test_a_head_count_in_words_is_read_as_a_number():
    reports = said("There will be seven of us at Nonna Rosa's.", [], load_cues("en"))
    assert [(r.name, r.value) for r in reports] == [("party_size", "7")]


def test_a_different_head_count_is_a_finding_naming_the_held_value():
    turns = [("user", "Can you book Nonna Rosa's? We're 7 people."), ("assistant", "Sure, table for 7.")]
    problems = disagreements(turns, [PARTY], load_cues("en"))
    assert len(problems) == 2
    assert problems[0].startswith("world: message 1 says party_size 7")
    assert "the world holds party_size = 6" in problems[0]


def test_the_held_head_count_passes():
    turns = [("user", "We're 6, can you book Nonna Rosa's?"), ("assistant", "Done: a table for 6 at 7.")]
    assert disagreements(turns, [PARTY], load_cues("en")) == []


def test_a_chinese_head_count_that_disagrees_is_found():
    zh = Held("party_size", "4", "4", "num", "event", "聚餐人数")
    turns = [("user", "周六订了5人的桌，帮我提醒一下大家。"), ("assistant", "好的，周六5个人，我来提醒。")]
    assert disagreements(turns, [zh], load_cues("zh"))[0].startswith("world: message 1 says party_size 5")
    assert disagreements([("user", "我们4个人AA就行。")], [zh], load_cues("zh")) == []


class WrongPartyProvider(ScriptedProvider):
    """A model that books a table for one person too many, then, told so, for the held number."""

    def __init__(self):
        super().__init__()
        self.prompts: list[str] = []

    def complete(self, messages, params, schema, timeout=None):
        self.prompts.append("\n".join(m["content"] for m in messages))
        self.retry = len(messages) > 1
        return super().complete(messages, params, schema, timeout)

    def dialogue(self, prompt: str) -> dict:
        out = super().dialogue(prompt)
        held = re.search(r"^- party_size = (\d+)", prompt, re.M)
        if held:
            size = int(held.group(1)) + (0 if self.retry else 1)
            out["exchanges"][0]["user"] += f" We're booked: table for {size}."
        return out


def test_a_wrong_party_size_is_fed_back_and_the_held_one_is_claimed(tmp_path):
    cfg = small_config(LLM)
    provider = WrongPartyProvider()
    traj = synthesize_persona(0, cfg, brain_for(cfg, provider, tmp_path))
    listed = [p for p in provider.prompts if re.search(r"^- party_size = \d+", p, re.M)]
    assert listed, "a social moment's prompt lists the party size the world holds"
    feedback = [p for p in listed if "broke these rules" in p]
    assert feedback and all(
        re.search(r"says party_size (\d+) .*the world holds party_size = (\d+)", p) for p in feedback
    )
    booked = [
        (s, m)
        for s in traj.sessions
        if s.author == "llm"
        for m in s.messages
        if "We're booked: table for" in m.content
    ]
    assert booked, "the corrected dialogue is accepted"
    claims = {c.id: c for c in traj.claims}
    for _, message in booked:
        size = re.search(r"table for (\d+)", message.content).group(1)
        party = [claims[c] for c in message.claims if claims[c].predicate == "party_size"]
        assert [(c.value, c.subject.startswith("event:")) for c in party] == [(size, True)]
        held = traj.ledger.state.values
        assert any(k.endswith("|party_size") and v == size for k, v in held.items())

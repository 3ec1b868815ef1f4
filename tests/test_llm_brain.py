"""The LLM brain: accepted outputs, checks with feedback, fallbacks, caching and replay.

A scripted provider (tests/llm_doubles.py) stands in for the model so the brain's
logic is tested exactly; tests/test_llm_live.py runs the real model.
"""

from __future__ import annotations

import json
import random

import pytest
from conftest import ROOT, small_config
from llm_doubles import ScriptedProvider

from keme.brains import make_brain
from keme.brains.llm import ChapterPlan, LLMBrain, PlannedEpisode, SynthesisError
from keme.cli import synthesize_dataset
from keme.llm import LLMClient
from keme.llm.cache import DiskCache
from keme.synth.context import PlanContext
from keme.synth.limits import load_config
from keme.synth.pipeline import start_trajectory, synthesize_persona
from keme.text import resources
from keme.validate import validate

LLM = "brain:\n  mode: llm\n  retries: 1\n"


def brain_for(cfg, provider, cache_dir):
    client = LLMClient(cfg.llm.model_copy(update={"cache_dir": str(cache_dir)}), provider=provider)
    return make_brain(cfg, client)


def test_accepted_dialogues_are_llm_authored_and_link_their_evidence(tmp_path):
    cfg = small_config(LLM + "changes:\n  per_month: 0.5\n  allowed: [new_phone]\n")
    brain = brain_for(cfg, ScriptedProvider(), tmp_path)
    traj = synthesize_persona(0, cfg, brain)
    authored = [s for s in traj.sessions if s.author == "llm"]
    assert len(authored) > len(traj.sessions) / 2
    by_id = {m.id: m for s in traj.sessions for m in s.messages}
    for attr in traj.persona.attributes():
        for version in attr.versions:
            assert all(version.value in by_id[m].content for m in version.evidence)
    phone = traj.persona.attribute("tech.phone").versions
    assert len(phone) == 2 and by_id[phone[1].evidence[0]].timestamp == phone[1].valid_from
    assert brain.stats.as_dict()["realizer.accepted"] == len(authored)


def test_llm_planned_chapters_keep_the_graph_valid(tmp_path):
    cfg = small_config(LLM)
    client = LLMClient(
        cfg.llm.model_copy(update={"cache_dir": str(tmp_path / "cache")}), provider=ScriptedProvider()
    )
    manifest = synthesize_dataset(cfg, tmp_path / "d", brain=make_brain(cfg, client))
    agents = manifest.stages["synth"]["agents"]
    assert agents["planner.accepted"] >= 1
    assert validate(tmp_path / "d") == []
    titles = [json.loads(line)["events"] for line in (tmp_path / "d/graphs.jsonl").read_text().splitlines()]
    assert any("Planned" in e["title"] for events in titles for e in events)


def test_bad_output_is_fed_back_then_falls_back_to_procedural(tmp_path):
    cfg = small_config(LLM)
    provider = ScriptedProvider(realizer_ok=False)
    brain = brain_for(cfg, provider, tmp_path)
    traj = synthesize_persona(0, cfg, brain)
    stats = brain.stats.as_dict()
    leaves = len(traj.sessions)
    assert stats["realizer.fallbacks"] == leaves and stats["realizer.retries"] == leaves
    assert all(s.author == "procedural" for s in traj.sessions)


def test_anomalous_fallback_flags_the_node_and_keeps_it_out_of_qa(tmp_path):
    cfg = small_config(LLM.replace("retries: 1", "retries: 0\n  fallback: anomalous"))
    brain = brain_for(cfg, ScriptedProvider(realizer_ok=False), tmp_path)
    traj = synthesize_persona(0, cfg, brain)
    flagged = [e for e in traj.graph.events if e.anomaly]
    assert flagged and all(e.anomaly.startswith("realizer:") for e in flagged)
    from keme.qa.facts import world_of

    world = world_of(traj.view())
    assert all(f.kind == "attr" for f in world.facts)  # no session facts survive: every leaf was flagged


def test_fail_mode_stops_with_the_reason(tmp_path):
    cfg = small_config(LLM.replace("retries: 1", "retries: 0\n  fallback: fail"))
    with pytest.raises(SynthesisError, match="realizer failed"):
        synthesize_persona(0, cfg, brain_for(cfg, ScriptedProvider(realizer_ok=False), tmp_path))


def _run(cfg, out, cache, provider):
    client = LLMClient(cfg.llm.model_copy(update={"cache_dir": str(cache)}), provider=provider)
    return synthesize_dataset(cfg, out, force=True, brain=make_brain(cfg, client))


def test_a_warm_cache_makes_zero_calls_and_the_same_dataset(tmp_path):
    cfg = small_config(LLM)
    first, second = ScriptedProvider(), ScriptedProvider()
    _run(cfg, tmp_path / "a", tmp_path / "cache", first)
    manifest = _run(cfg, tmp_path / "b", tmp_path / "cache", second)
    assert first.calls > 0 and second.calls == 0
    assert manifest.stages["synth"]["llm"]["stages"]["synth.realizer"]["cache_hits"] > 0
    for name in ("sessions.jsonl", "graphs.jsonl", "personas.jsonl", "qa.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_replay_provider_reproduces_a_recorded_run_without_a_model(tmp_path):
    cfg = small_config(LLM)
    _run(cfg, tmp_path / "a", tmp_path / "cache", ScriptedProvider())
    replay = cfg.model_copy(
        update={
            "llm": cfg.llm.model_copy(update={"provider": "replay", "cache_dir": str(tmp_path / "cache")})
        }
    )
    synthesize_dataset(replay, tmp_path / "b", force=True)
    assert (tmp_path / "a/sessions.jsonl").read_bytes() == (tmp_path / "b/sessions.jsonl").read_bytes()


def test_the_compatibility_context_stays_within_its_token_cap(tmp_path):
    cfg = small_config(LLM + "  context_tokens: 60\n")
    brain = brain_for(cfg, ScriptedProvider(), tmp_path)
    contexts: list[str] = []
    original = brain._context
    brain._context = lambda leaf, traj: contexts.append(original(leaf, traj)) or contexts[-1]
    synthesize_persona(0, cfg, brain)
    from keme.text.tokens import count_tokens

    assert len(contexts) > 10 and max(count_tokens(c) for c in contexts) <= 60
    assert sum(1 for c in contexts if c) > 5


def test_the_cache_key_covers_model_messages_params_and_schema(tmp_path):
    cache = DiskCache(tmp_path)
    client = LLMClient(
        small_config().llm.model_copy(update={"cache_dir": str(tmp_path)}),
        provider=ScriptedProvider(),
        cache=cache,
    )
    base = [{"role": "user", "content": 'Rewrite this question. Question: "Where?"'}]
    schema = {"title": "Reworded", "type": "object"}
    client.chat(base, stage="t", schema=schema)
    client.chat(base, stage="t", schema=schema, temperature=0.9)
    client.chat(base, stage="t", schema=schema)
    assert client.ledger.stages["t"].calls == 2 and client.ledger.stages["t"].cache_hits == 1


class ClockBlindProvider(ScriptedProvider):
    """A model that writes a good dialogue but says it is on its lunch break, whatever the hour."""

    def __init__(self):
        super().__init__()
        self.prompts: list[str] = []

    def complete(self, messages, params, schema, timeout=None):
        self.prompts.append("\n".join(m["content"] for m in messages))
        return super().complete(messages, params, schema, timeout)

    def dialogue(self, prompt: str) -> dict:
        out = super().dialogue(prompt)
        if "写一段" not in prompt:
            out["exchanges"][0]["user"] = "I'm on my lunch break right now. " + out["exchanges"][0]["user"]
        return out


def test_a_dialogue_the_coherence_checker_rejects_is_fed_back_with_the_finding(tmp_path):
    cfg = small_config(LLM)
    provider = ClockBlindProvider()
    traj = synthesize_persona(0, cfg, brain_for(cfg, provider, tmp_path))
    retried = [p for p in provider.prompts if "calendar:" in p and "lunch break" in p]
    assert retried, "the checker's calendar finding reaches the model"
    off_hours = [
        s for s in traj.sessions if s.author == "llm" and not 11 <= s.messages[0].timestamp.hour < 14
    ]
    assert all("lunch break" not in s.messages[0].content for s in off_hours)


@pytest.mark.parametrize("index", [0, 1])
def test_an_llm_planned_chapter_draws_its_changes_first(index):
    """A fitness episode the model starts before a sport change it also plans gets a goal for both sports
    (the changes are built first, as in the rule planner)."""
    cfg = load_config(ROOT / "configs/demo.yaml")
    res = resources.get(cfg.personas[index].language)
    traj = start_trajectory(index, cfg, res)
    ctx = PlanContext(cfg, res)
    chapter = traj.children(None)[0]
    old = traj.persona.value_at("sport.main_sport", chapter.start)
    plan = ChapterPlan(
        episodes=[
            PlannedEpisode(kind="fitness", title="training", start_day=15, days=13),
            PlannedEpisode(kind="new_sport", title="a new sport", start_day=24, days=1),
        ]
    )
    for seed in range(8):
        built = LLMBrain(cfg, client=None)._build_chapter(plan, chapter, traj, ctx, random.Random(seed))
        assert built is not None
        change = next(e for e in built if e.change == "new_sport")
        fitness = next(e for e in built if e.kind == "fitness")
        new = change.params["set:sport.main_sport"]
        assert fitness.params["goal"] in set(ctx.catalog.goals_for(old)) & set(ctx.catalog.goals_for(new))
        for event in built:
            traj.remove_event(event.id)

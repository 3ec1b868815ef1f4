"""The field systems' LLM calls are bounded and their replies counted (baselines/field_llm.py, mem0, LangMem).

Against a scripted OpenAI-compatible endpoint on loopback (tests/llm_doubles.py): a reply the library cannot
read is counted, a failed attempt is retried as the SDK the libraries use would (at most `max_retries` more,
each under a wall-clock deadline), and when the attempts run out the system raises one KemeError saying so.
No model is run and nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import numpy as np
import pytest
from llm_doubles import Endpoint as ScriptedEndpoint

from baselines.field_llm import Endpoint, Replies, bounded_strings, local_dialect
from eval.contract import Query
from eval.report import leaderboard_rows, summarize
from keme.errors import KemeError
from keme.models import Message, Session

openai = pytest.importorskip("openai")


def chat(endpoint: Endpoint, replies: Replies) -> None:
    """One chat completion through the endpoint's client, as mem0 and LangMem send them."""
    client = openai.OpenAI(
        base_url=endpoint.base_url,
        api_key="no-key",
        max_retries=endpoint.max_retries,
        http_client=endpoint.http_client(None, replies),
    )
    client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], response_format={"type": "json_object"}
    )


def local(url: str, deadline_s: float = 30.0, max_retries: int = 2) -> Endpoint:
    return Endpoint(url, "m", "no-key", local=False, deadline_s=deadline_s, max_retries=max_retries)


# ---------------------------------------------------------------- the transport
def test_a_reply_the_library_cannot_read_is_counted_as_unparseable():
    with ScriptedEndpoint("ok") as server:  # answers "I do not know." to a request without a titled schema
        endpoint = local(server.url)
        chat(endpoint, Replies(readable=lambda request, reply: False))
    usage = endpoint.meter.snapshot()
    assert (usage.llm_calls, usage.llm_unparseable, usage.llm_retries) == (1, 1, 0)


def test_a_readable_reply_is_counted_with_the_endpoints_tokens():
    with ScriptedEndpoint("ok") as server:
        endpoint = local(server.url)
        chat(endpoint, Replies())
    usage = endpoint.meter.snapshot()
    assert (usage.llm_calls, usage.llm_unparseable, usage.prompt_tokens, usage.completion_tokens) == (
        1,
        0,
        20,
        5,
    )


def test_a_body_that_is_not_json_is_unparseable_not_a_crash_of_the_count():
    with ScriptedEndpoint("garbage") as server:
        endpoint = local(server.url, max_retries=0)
        with pytest.raises((ValueError, openai.APIError)):  # the SDK cannot read it either
            chat(endpoint, Replies())
    assert endpoint.meter.snapshot().llm_unparseable == 1


def test_a_check_that_fails_on_an_odd_reply_counts_it_unparseable():
    def broken(request, reply):
        raise KeyError("choices")

    with ScriptedEndpoint("ok") as server:
        endpoint = local(server.url)
        chat(endpoint, Replies(readable=broken))
    assert endpoint.meter.snapshot().llm_unparseable == 1


def test_a_refused_attempt_is_retried_once_and_counted():
    with ScriptedEndpoint("429-once") as server:
        endpoint = local(server.url)
        chat(endpoint, Replies())
        requests = server.requests
    usage = endpoint.meter.snapshot()
    assert (requests, usage.llm_retries, usage.llm_calls) == (2, 1, 1)


def test_an_attempt_with_no_reply_ends_at_its_deadline_and_the_attempts_are_bounded():
    with ScriptedEndpoint("hang") as server:
        endpoint = local(server.url, deadline_s=0.3, max_retries=1)
        with pytest.raises(openai.APITimeoutError):
            chat(endpoint, Replies())
        requests = server.requests
    usage = endpoint.meter.snapshot()
    assert (requests, usage.llm_retries, usage.llm_calls) == (2, 1, 0)


def test_a_request_the_library_sends_again_after_a_rejected_reply_is_a_retry():
    with ScriptedEndpoint("ok") as server:
        endpoint = local(server.url)
        chat(endpoint, Replies(asks_again=lambda request: True))
    assert endpoint.meter.snapshot().llm_retries == 1


# ---------------------------------------------------------------- the local dialect
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
    for n, p in (
        ("PatchDoc", {"json_doc_id": {"type": "string"}}),
        ("Memory", {"content": {"type": "string"}}),
        ("RemoveDoc", {"json_doc_id": {"type": "string", "enum": ["0"]}}),
    )
]


def test_a_forced_choice_names_the_first_tool_not_avoided():
    body = local_dialect(
        {"tools": TOOLS, "tool_choice": "any"}, force_tool=True, avoid=("PatchDoc", "RemoveDoc")
    )
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Memory"}}


def test_with_every_tool_avoided_the_first_is_named():
    body = local_dialect({"tools": TOOLS[:1]}, force_tool=True, avoid=("PatchDoc",))
    assert body["tool_choice"]["function"]["name"] == "PatchDoc"


def test_the_named_tools_strings_are_bounded_and_the_others_left_alone():
    body = local_dialect({"tools": TOOLS}, force_tool=True, avoid=("PatchDoc",), max_chars=50)
    parameters = [t["function"]["parameters"]["properties"] for t in body["tools"]]
    assert parameters[1]["content"]["maxLength"] == 50
    assert "maxLength" not in parameters[0]["json_doc_id"] and TOOLS[1]["function"]["parameters"] is not None
    assert "maxLength" not in TOOLS[1]["function"]["parameters"]["properties"]["content"]  # a copy


def test_bounded_strings_keeps_an_enum_and_an_existing_bound():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "enum": ["x"]}, "b": {"type": "string", "maxLength": 3}},
    }
    assert bounded_strings(schema, 9)["properties"] == schema["properties"]


# ---------------------------------------------------------------- mem0
mem0_module = pytest.importorskip("baselines.mem0")


def test_mem0s_reply_bound_fits_max_tokens():
    for max_tokens in (64, 256, 2000):
        memory = mem0_module.extraction_schema(max_tokens)["properties"]["memory"]
        items, chars = memory["maxItems"], memory["items"]["properties"]["text"]["maxLength"]
        longest = mem0_module.REPLY_TOKENS + items * (chars + mem0_module.ITEM_TOKENS)
        assert items >= 1 and (longest <= max_tokens or (items, chars) == (1, 20))


@pytest.mark.parametrize(
    ("content", "readable"),
    [
        ('{"memory": [{"id": "0", "text": "likes tea"}]}', True),
        ('```json\n{"memory": []}\n```', True),
        ('Sure! {"memory": [{"id": "0", "text": "x"}]} hope this helps', True),
        ("", True),  # mem0: nothing extracted, not an error
        ('{"memory": [{"id": "0", "text": "cut at max_tok', False),
        ("I do not know.", False),
        ('{"memory": "likes tea"}', False),
    ],
)
def test_mem0_reads_a_reply_as_mem0_does(content, readable):
    reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    try:
        verdict = mem0_module.mem0_reads({}, reply)
    except Exception:  # noqa: BLE001 - the transport counts a check that raises as unreadable
        verdict = False
    assert verdict is readable


class BatchCountingEmbedder:
    """A stand-in for the shared MiniLM: unit vectors from a hash, and the size of every call."""

    def __init__(self):
        self.calls: list[int] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        rows = np.array([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=384) for t in texts])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def session(index: int, texts: list[str]) -> Session:
    start = datetime(2024, 1, 1) + timedelta(days=index)
    messages = [
        Message(id=f"s{index}:m{i}", role="user", content=text, timestamp=start + timedelta(minutes=i))
        for i, text in enumerate(texts)
    ]
    end = messages[-1].timestamp
    return Session(
        id=f"s{index}", persona_id="p01", event_id="e1", language="en", pattern="chat", start=start,
        end=end, messages=messages,
    )  # fmt: skip


@pytest.fixture
def fake_minilm(monkeypatch):
    pytest.importorskip("mem0")
    embedder = BatchCountingEmbedder()
    monkeypatch.setattr(mem0_module, "shared_minilm", lambda: embedder)
    return embedder


def test_mem0_raw_embeds_the_messages_of_a_flush_in_one_batch(fake_minilm):
    system = mem0_module.Mem0(infer=False)
    sessions = [session(0, ["I adopted a cat", "her name is Miso"]), session(1, ["Miso likes tuna"])]
    try:
        system.reset("p01")
        usage = [system.ingest("p01", s) for s in sessions]
        system.flush("p01")
        stored = system.size("p01")
        hits = system.retrieve("p01", Query(text="cat name", now=datetime(2024, 2, 1)), 3).hits
    finally:
        system.close()
    assert fake_minilm.calls == [3, 1]  # the three messages at once, then the query
    assert [u.embedded_texts for u in usage] == [2, 1] and stored == 3
    assert {m for h in hits for m in h.message_ids} <= {"s0:m0", "s0:m1", "s1:m0"}


def test_mem0_raw_embeds_a_message_said_twice_once_and_stores_both(fake_minilm):
    system = mem0_module.Mem0(infer=False)
    try:
        system.reset("p01")
        system.ingest("p01", session(0, ["ok", "ok"]))
        system.flush("p01")
        stored = system.size("p01")
    finally:
        system.close()
    assert (fake_minilm.calls, stored) == ([1], 2)


def test_mem0_counts_a_reply_it_cannot_read_in_the_ingests_usage(fake_minilm):
    with ScriptedEndpoint("ok") as server:  # "I do not know.": mem0 logs a parse error and stores nothing
        system = mem0_module.Mem0(infer=True, base_url=server.url, structured_output="json_object")
        try:
            system.reset("p01")
            usage = system.ingest("p01", session(0, ["I adopted a cat"]))
        finally:
            system.close()
        requests = server.requests
    assert (requests, usage.llm_calls, usage.llm_unparseable, usage.llm_retries) == (1, 1, 1, 0)


def test_mem0_with_an_endpoint_that_never_answers_raises_naming_the_bound(fake_minilm):
    with ScriptedEndpoint("hang") as server:
        system = mem0_module.Mem0(infer=True, base_url=server.url, deadline_s=0.3, max_retries=1)
        try:
            system.reset("p01")
            with pytest.raises(KemeError, match=r"no complete reply in 2 attempts of at most 0\.3 s each"):
                system.ingest("p01", session(0, ["I adopted a cat"]))
        finally:
            system.close()
        requests = server.requests
    assert requests == 2


def test_mem0_refuses_an_unbounded_call():
    with pytest.raises(ValueError, match="deadline_s and budget_s must be > 0"):
        mem0_module.Mem0(deadline_s=0)


# ---------------------------------------------------------------- LangMem
langmem_module = pytest.importorskip("baselines.langmem")


def tool_reply(*arguments: str) -> dict:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "Memory", "arguments": a}}
        for i, a in enumerate(arguments)
    ]
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls}}]}


WITH_TOOLS = {"tools": TOOLS}


def test_langmem_reads_a_tool_call_with_json_arguments():
    pytest.importorskip("langchain_core")
    assert langmem_module.langmem_reads(WITH_TOOLS, tool_reply(json.dumps({"content": "likes tea"})))


def test_langmem_cannot_read_arguments_cut_mid_string():
    pytest.importorskip("langchain_core")
    assert not langmem_module.langmem_reads(WITH_TOOLS, tool_reply('{"content": "likes te'))


def test_langmem_cannot_read_prose_where_a_tool_call_was_asked_for():
    reply = {"choices": [{"message": {"role": "assistant", "content": "I will remember that."}}]}
    assert not langmem_module.langmem_reads(WITH_TOOLS, reply)


def test_trustcalls_repair_request_is_counted_as_a_retry():
    repair = {"tools": [{"type": "function", "function": {"name": "PatchFunctionErrors"}}]}
    assert langmem_module.LANGMEM_REPLIES.asks_again(repair)
    assert not langmem_module.LANGMEM_REPLIES.asks_again(WITH_TOOLS)


# ---------------------------------------------------------------- the run's summary and leaderboard
def test_the_summary_and_leaderboard_carry_the_unparseable_and_retry_counts(tmp_path):
    folder = tmp_path / "mem0"
    folder.mkdir()
    usage = {
        "llm_calls": 19,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "llm_unparseable": 3,
        "llm_retries": 1,
    }
    ingest = {"persona_id": "p01", "sessions": 19, "messages": 369, "seconds": 10.0, "usage": usage}
    (folder / "ingest.jsonl").write_text(json.dumps(ingest) + "\n")
    row = {"question_id": "q1", "type": "single_hop", "language": "en", "hops": 1, "gold_messages": 1,
           "retrieve_ms": 2.0, "context_tokens": 10, "recall_any@5": 1.0}  # fmt: skip
    summary = summarize(folder, [row])
    assert (summary["memory_llm_unparseable"], summary["memory_llm_retries"]) == (3, 1)
    board = leaderboard_rows({"systems": {"mem0": summary}})[0]
    assert (board["LLM unparsed"], board["LLM retries"]) == (3, 1)


# ---------------------------------------------------------------- a local server that died
class DeadHost:
    model = "m"

    def failure(self) -> str:
        return "the local model (llama.cpp server, pid 7) was killed by SIGKILL (out of memory? ...)"


def test_a_refused_connection_to_a_dead_local_server_says_how_it_died():
    from baselines.field_llm import explain

    endpoint = Endpoint("http://127.0.0.1:9/v1", "m", "no-key", local=True, host=DeadHost())
    import httpx2

    error = openai.APIConnectionError(request=httpx2.Request("POST", endpoint.base_url + "/chat/completions"))
    assert "was killed by SIGKILL" in str(explain("mem0", endpoint, error))

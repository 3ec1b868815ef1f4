"""The harness owns the shipped model's endpoint and hands it to the systems that call an LLM; a system never
starts a process itself (baselines sit below keme.llm, tests/test_layers.py)."""

from __future__ import annotations

import pytest

from baselines.field_llm import is_loopback, open_endpoint
from eval.local_model import LOCAL_MODEL
from eval.registry import REGISTRY, create, parameters
from keme.errors import KemeError


class FakeModel:
    model = "tiny-model"

    def __init__(self) -> None:
        self.asked = 0

    def url(self) -> str:
        self.asked += 1
        return "http://127.0.0.1:9999/v1"


@pytest.mark.parametrize("name", ["mem0", "langmem"])
def test_a_system_that_calls_an_llm_gets_the_local_model_from_the_harness(name):
    system = create(name)
    try:
        assert system.local_model is LOCAL_MODEL
    finally:
        system.close()


def test_a_system_that_calls_no_llm_gets_none():
    system = create("mem0_raw")
    try:
        assert system.local_model is None
    finally:
        system.close()


def test_the_injected_model_is_not_a_params_file_setting():
    assert "local_model" not in parameters(REGISTRY["mem0"]) and "base_url" in parameters(REGISTRY["mem0"])


def test_without_base_url_the_endpoint_is_the_injected_model_and_starts_nothing_else():
    model = FakeModel()
    endpoint = open_endpoint("mem0", None, None, "OPENAI_API_KEY", model)
    assert (endpoint.base_url, endpoint.model, endpoint.local, model.asked) == (
        "http://127.0.0.1:9999/v1",
        "tiny-model",
        True,
        1,
    )


def test_without_base_url_or_an_injected_model_the_error_says_what_to_set():
    with pytest.raises(KemeError, match=r"mem0: no LLM endpoint: set the system's base_url"):
        open_endpoint("mem0", None, None, None, None)


def test_a_remote_endpoint_without_a_key_is_refused_before_any_request(monkeypatch):
    monkeypatch.delenv("KEME_TEST_KEY", raising=False)
    with pytest.raises(KemeError, match=r"no API key for https://api.example.org/v1: set .*KEME_TEST_KEY"):
        open_endpoint("langmem", "https://api.example.org/v1", "m", "KEME_TEST_KEY", None)


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.0.0.2:8000/v1", False),
        ("https://api.example.org/v1", False),
    ],
)
def test_only_this_machine_counts_as_loopback(url, loopback):
    assert is_loopback(url) is loopback

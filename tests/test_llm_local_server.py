"""The local provider runs its model behind a server in a child process: what it sends, and what a crash
becomes.

A stand-in server (tests/llm_doubles.FAKE_LLAMA_SERVER) takes llama.cpp's place, so these run fast and
without the model; tests/test_llm_live.py runs the real one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from llm_doubles import fake_llama_command

from keme.llm import FatalError, LLMClient, LLMConfig
from keme.llm.errors import LocalModelDied
from keme.llm.providers import LocalProvider
from keme.llm.server import LocalServer, describe_exit, llama_server_command

pytest.importorskip("openai")


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


def local_client(tmp_path, gguf, behaviour="ok", **extra) -> LLMClient:
    config = LLMConfig(
        provider="local", model_path=str(gguf), cache_dir=str(tmp_path / "cache"), timeout_s=20, **extra
    )
    provider = LocalProvider(
        config, server=lambda cfg, path: LocalServer(fake_llama_command(behaviour), startup_timeout_s=20)
    )
    return LLMClient(config, provider=provider)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_requests_carry_the_local_settings_and_constrain_decoding_to_the_schema(tmp_path, gguf):
    client = local_client(tmp_path, gguf, repeat_penalty=1.3, seed=7)
    try:
        reply = client.chat([{"role": "user", "content": "hi"}], stage="t", schema={"type": "object"})
    finally:
        client.close()
    assert json.loads(reply.content) == {"echo": 1.3, "seed": 7, "format": "json_object"}


def test_the_cache_still_keys_calls_as_the_local_provider(tmp_path, gguf):
    client = local_client(tmp_path, gguf)
    try:
        client.chat([{"role": "user", "content": "hi"}], stage="t")
    finally:
        client.close()
    entry = json.loads(next((tmp_path / "cache").rglob("*.json")).read_text())
    assert entry["request"]["provider"] == "local" and entry["response"]["model"] == "SmolLM2-135M-Instruct"


def test_a_sigill_in_the_model_is_an_error_naming_the_cause_and_the_fix(tmp_path, gguf):
    client = local_client(tmp_path, gguf, behaviour="sigill-on-request")
    try:
        with pytest.raises(LocalModelDied) as caught:
            client.chat([{"role": "user", "content": "hi"}], stage="t")
    finally:
        client.close()
    message = str(caught.value)
    assert "killed by SIGILL" in message and "CPU features this machine lacks" in message
    assert (
        "run scripts/setup.sh, which builds it portably" in message and "about to decode a batch" in message
    )
    assert client.ledger.stages["t"].retries == 0  # a dead model is not retried


def test_a_server_that_exits_at_start_is_reported_with_its_log(tmp_path, gguf):
    client = local_client(tmp_path, gguf, behaviour="exit-at-start")
    with pytest.raises(LocalModelDied, match="(?s)exited with code 3.*cannot load the model file"):
        client.chat([{"role": "user", "content": "hi"}], stage="t")


def test_a_server_that_never_comes_up_is_stopped_and_reported(tmp_path, gguf):
    server = LocalServer(fake_llama_command("never-ready"), startup_timeout_s=1)
    with pytest.raises(FatalError, match="did not come up within 1s"):
        server.start()
    assert server.process is None


def test_a_missing_model_file_names_the_setting(tmp_path):
    client = local_client(tmp_path, tmp_path / "nope.gguf")
    with pytest.raises(FatalError, match="GGUF model not found.*llm.model_path"):
        client.chat([{"role": "user", "content": "hi"}], stage="t")


def test_closing_the_client_stops_the_server_and_removes_its_log(tmp_path, gguf):
    client = local_client(tmp_path, gguf)
    client.chat([{"role": "user", "content": "hi"}], stage="t")
    server = client.provider.server
    pid, log = server.process.pid, server.log_path
    client.close()
    assert not alive(pid) and not log.exists()


PARENT = r"""
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "keme.llm.child", str(os.getpid()),
                          "http.server", "0", "--bind", "127.0.0.1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
time.sleep(60)
"""


def test_the_child_does_not_outlive_a_killed_keme():
    """No orphans: the child notices its parent is gone, even after SIGKILL, when no exit handler runs."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": root},
    )
    child = int(parent.stdout.readline())
    assert alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(100):  # bounded: the watch looks twice a second
        if not alive(child):
            break
        time.sleep(0.1)
    assert not alive(child)


INTERRUPTED = r"""
import signal, sys, time
# a shell's background job starts with SIGINT ignored; Ctrl-C in a terminal is what this test plays
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, sys.argv[1])
from llm_doubles import fake_llama_command
from keme.llm.server import LocalServer
server = LocalServer(fake_llama_command("ok"), startup_timeout_s=20)  # no parent watch: only the exit handler
server.start()
try:
    print(server.process.pid, flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_in_keme_stops_the_server():
    tests = os.path.dirname(os.path.abspath(__file__))
    parent = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, tests],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": os.path.dirname(tests)},
    )
    child = int(parent.stdout.readline())
    parent.send_signal(signal.SIGINT)
    assert parent.wait(timeout=30) == 130
    assert not alive(child)


@pytest.mark.parametrize(
    "code, words",
    [
        (-signal.SIGILL, "CPU features this machine lacks"),
        (-signal.SIGSEGV, "crashed with SIGSEGV"),
        (-signal.SIGKILL, "out of memory"),
        (1, "exited with code 1"),
    ],
)
def test_each_way_of_dying_is_explained(code, words):
    assert words in describe_exit(code)


def test_the_server_command_passes_the_local_settings():
    command = llama_server_command("/m.gguf", alias="smol", n_ctx=2048, n_threads=3, seed=11, parent=42)(8123)
    assert command[1:5] == ["-m", "keme.llm.child", "42", "llama_cpp.server"]
    pairs = dict(zip(command[5::2], command[6::2]))
    assert pairs == {
        "--model": "/m.gguf",
        "--model_alias": "smol",
        "--host": "127.0.0.1",
        "--port": "8123",
        "--n_ctx": "2048",
        "--seed": "11",
        "--interrupt_requests": "False",
        "--verbose": "False",
        "--n_threads": "3",
    }

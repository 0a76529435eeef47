"""The local embedder: a query's embedding never queues behind a batch being embedded, and a text's
vector has the same bits whatever else is in its call and whichever process embeds it."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

import pytest

from kg import load_settings
from kg.core.embedders.base import QUERY_TEXTS, embed_async
from kg.core.embedders.configured import embedder_for
from kg.core.embedders.onnx import OnnxMiniLM


def test_a_query_is_embedded_while_a_batch_runs() -> None:
    embedder = embedder_for(load_settings().embedding)
    if not isinstance(embedder, OnnxMiniLM):
        pytest.skip("the local embedder is not configured")
    embedder.embed(["warm the query path"])
    batch = [f"turn {i}: the warehouse robots moved to the analytics database in Lisbon" for i in range(600)]
    finished: list[str] = []
    started = threading.Event()

    def write() -> None:
        started.set()
        vectors = embedder.embed(batch)
        finished.append(f"batch of {len(vectors)}")

    writer = threading.Thread(target=write)
    writer.start()
    started.wait()
    time.sleep(0.5)  # the batch is on its thread by now (not a timing assertion: it only orders the two)
    queries = [embedder.embed(["which database did we choose?"]) for _ in range(3)]
    queries.append(embedder.embed(["a query", "of a few", "texts"][:QUERY_TEXTS]))
    finished.append("queries")
    writer.join()
    assert finished == ["queries", "batch of 600"]
    assert all(len(v) == embedder.dim for q in queries for v in q)


@pytest.mark.skipif(sys.platform != "linux", reason="a thread has a nice value of its own on Linux only")
def test_batch_threads_yield_the_cpu_and_query_threads_do_not() -> None:
    """`[embedding] batch_nice`: the threads that embed batches run that much nicer than the
    process; the query thread does not, even when a batch came first."""
    settings = load_settings().model_copy(deep=True)
    settings.embedding.batch_nice = 7
    embedder = OnnxMiniLM(settings.embedding)
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen: dict[str, int] = {}

    def note(texts: list[str], kind: str) -> list[list[float]]:
        name = threading.current_thread().name.split("_")[0]
        seen[name] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return encode(texts, kind)

    encode, embedder._encode = embedder._encode, note  # type: ignore[method-assign]
    embedder.embed([f"a batch text {i}" for i in range(20)])  # the batch first: it starts the tokenizer's pool
    embedder.embed(["a query"])
    assert seen == {"embed-batch": min(19, base + 7), "embed-query": base}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller's own is untouched


def test_the_query_path_gives_the_batch_path_vectors() -> None:
    embedder = embedder_for(load_settings().embedding)
    if not isinstance(embedder, OnnxMiniLM):
        pytest.skip("the local embedder is not configured")
    texts = ["What did we decide about the database?", "Lisbon is lovely in May."]
    batched = embedder.embed(texts * (QUERY_TEXTS // 2 + 1))[:2]  # more than QUERY_TEXTS: the batch thread
    alone = [embedder.embed([t])[0] for t in texts]
    assert alone == batched  # the same bits: each text is pooled over its own tokens


async def test_a_query_never_waits_for_the_event_loops_shared_threads() -> None:
    """Every thread of the loop's shared pool held by something slow (as ingest batches waiting for
    the model held them under load): `embed_async` still embeds a query, on the model's own thread."""
    embedder = embedder_for(load_settings().embedding)
    if not isinstance(embedder, OnnxMiniLM):
        pytest.skip("the local embedder is not configured")
    embedder.embed(["warm the query path"])
    loop = asyncio.get_running_loop()
    release = threading.Event()
    held = [loop.run_in_executor(None, release.wait) for _ in range(64)]  # more than the pool has
    try:
        [vector] = await asyncio.wait_for(embed_async(embedder, ["which database did we choose?"]), 60)
        batch = await asyncio.wait_for(embed_async(embedder, [f"turn {i}" for i in range(8)]), 60)
    finally:
        release.set()
        await asyncio.gather(*held)
    assert len(vector) == embedder.dim and len(batch) == 8
    assert vector == pytest.approx(embedder.embed(["which database did we choose?"])[0], abs=1e-5)


QUERY = "which database did we choose for the sensors?"
FIRST_CALL = ("import json, sys\nfrom kg import load_settings\nfrom kg.core.embedders.configured import embedder_for\n"
              "print(json.dumps(embedder_for(load_settings().embedding).embed([sys.argv[1]])[0]))")


def test_a_querys_vector_is_the_same_in_every_process_first_call_or_not() -> None:
    """A door in a process of its own (`kg search`, `kg mcp`) embeds the query as its very first text;
    the process that wrote the turns has embedded batches before. Both must give the same bits, or
    two near-equal turns swap places between doors (issue 22)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    embedder = embedder_for(load_settings().embedding)
    embedder.embed([f"turn {i} of a batch about the sensor database" for i in range(20)])
    here = embedder.embed([QUERY])[0]
    done = subprocess.run([sys.executable, "-c", FIRST_CALL, QUERY], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here


def test_the_torch_extra_runs_the_same_model() -> None:
    """`[embedding] provider = "sentence-transformers"` (`kg-memory[torch]`): the bundled MiniLM on
    torch keeps the vectors' old name and agrees with the int8 ONNX default."""
    pytest.importorskip("sentence_transformers", reason="the torch extra is not installed")
    from kg.core.embedders.torch import SentenceTransformerEmbedder
    from kg.core.settings.tree import EmbeddingSettings

    torch_model = SentenceTransformerEmbedder(EmbeddingSettings(provider="sentence-transformers"))
    assert (torch_model.name, torch_model.dim) == ("local/all-MiniLM-L6-v2", 384)
    first = torch_model.embed([QUERY])[0]  # its first call: the model loads here
    texts = [f"Maya: turn {i} says the sensor database moved to Lisbon" for i in range(12)] + [QUERY]
    together = torch_model.embed(texts)
    assert torch_model.embed([QUERY])[0] == first
    default = embedder_for(load_settings().embedding).embed(texts)
    cosines = [sum(x * y for x, y in zip(a, b)) for a, b in zip(together, default)]
    assert min(cosines) > 0.99


def test_the_torch_embedders_first_call_may_be_a_batch() -> None:
    """The first call loads the model on the batch thread; a batch then embeds there (it had waited
    for that same one-thread executor: bench.load's prefill hung on its first batch)."""
    pytest.importorskip("sentence_transformers")
    from kg.core.embedders.torch import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(load_settings().embedding)
    texts = [f"turn {i}: the warehouse moved to Lisbon" for i in range(QUERY_TEXTS + 6)]
    vectors = embedder.submit(texts).result(timeout=600)  # a bound, so that the old deadlock fails instead of hanging
    assert len(vectors) == len(texts) and all(len(v) == embedder.dim for v in vectors)

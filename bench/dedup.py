"""Entity dedup benchmark through the real resolver and Neo4j: pairwise and B-cubed scores as JSON.

    python -m bench.dedup [--data PATH] [--json] [--preload 10000] [--batch 256] [--no-embedding] [--keep]

Mentions stream in file order through `GraphResolver`, a batch per transaction, into a fresh
namespace (deleted at the end unless --keep). `--preload N` first writes N synthetic entities
(names, keys, identifiers, random name vectors) into the namespace with bulk Cypher, so the
throughput is measured against a graph that already holds them. Metrics are bench.dedup_core's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench import arguments
from bench.dedup_core import DEFAULT_DATA, errors, load_mentions, read_arguments, score, stage_counts
from kg.core.models.facts import entity_id, entity_key
from kg.core.settings.tree import load_settings
from kg.ingest.dedup import Mention, Resolution, profile
from kg.ingest.dedup.entity import new_entity
from kg.ingest.dedup.neo4j_resolver import GraphResolver, name_id
from kg.ingest.dedup.neo4j_source import to_props
from kg.memory import AsyncMemory

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"
_TYPES = ["person", "organization", "product", "place", "concept", "order"]


def _word(rng: random.Random, syllables: int) -> str:
    """A pronounceable made-up word ("Tovekar"): names as varied as real ones, none of them real."""
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables)).capitalize() + \
        rng.choice(_CONSONANTS + "  ").strip()


def synthetic_mentions(n: int, seed: int = 7) -> list[Mention]:
    """N distinct made-up entities, a sixth of each type, some with an identifier."""
    rng = random.Random(seed)
    out: list[Mention] = []
    for i in range(n):
        kind = _TYPES[i % len(_TYPES)]
        if kind == "person":
            name, attrs = f"{_word(rng, 2)} {_word(rng, 3)}", {"email": f"p{i}@synthetic.example"}
        elif kind == "organization":
            name, attrs = f"{_word(rng, 3)} {rng.choice(['Labs', 'Systems', 'Group', 'Partners'])} {i}", {}
        elif kind == "product":
            name, attrs = f"{_word(rng, 2)} {_word(rng, 2)} X{i}", {}
        elif kind == "place":
            name, attrs = f"{_word(rng, 3)}{rng.choice(['ville', 'burg', 'stad'])} {_word(rng, 1)}{i}", {}
        elif kind == "concept":
            name, attrs = f"{_word(rng, 3)} {_word(rng, 2)} {i}", {}
        else:
            name, attrs = f"Order SYN-{i:06d}", {"order_id": f"SYN-{i:06d}"}
        out.append(Mention(name, kind, attrs))
    return out


async def preload(memory: AsyncMemory, namespace: str, n: int, resolver: GraphResolver, chunk: int = 2000) -> float:
    """Write n synthetic entities with bulk Cypher (not through the resolver); returns seconds."""
    start = time.perf_counter()
    settings = resolver.settings
    rng = np.random.default_rng(11)
    dim = memory.embedder.dim
    mentions = synthetic_mentions(n)
    for offset in range(0, n, chunk):
        rows: list[dict[str, Any]] = []
        for m in mentions[offset : offset + chunk]:
            prof = profile(m, settings)
            key = entity_key(m.name)
            entity = new_entity(entity_id(namespace, key), prof)
            vector = None
            if resolver.needs_vector(prof):
                v = rng.standard_normal(dim).astype(np.float32)
                vector = (v / np.linalg.norm(v)).tolist()
            rows.append({
                "id": entity.id, "key": key, "props": to_props(entity, namespace),
                "identifiers": [{"kind": k, "value": v} for k, vs in entity.identifiers.items() for v in vs],
                "name": {"id": name_id(entity.id, m.name), "text": m.name, "embedding": vector} if vector else None,
            })
        await memory.store.write("entities/bulk_load", rows=rows, model=memory.embedder.name)
    return time.perf_counter() - start


async def warm_up(memory: AsyncMemory, resolver: GraphResolver) -> None:
    """Load the model and let Neo4j plan the resolver's statements once, outside the timing (a
    running service has both cached)."""
    scratch = f"bench-warmup-{uuid.uuid4().hex[:8]}"
    try:
        await resolver.resolve(memory.store, scratch, synthetic_mentions(12))
    finally:
        await memory.delete_namespace(scratch)


async def stream(memory: AsyncMemory, namespace: str, mentions: Sequence[Mention], resolver: GraphResolver,
                 batch: int) -> tuple[list[Resolution], float]:
    """Batches in order, each in its own transaction (name vectors are computed inside, for the
    mentions that names and identifiers leave open)."""
    resolutions: list[Resolution] = []
    start = time.perf_counter()
    for offset in range(0, len(mentions), batch):
        resolutions += await resolver.resolve(memory.store, namespace, mentions[offset : offset + batch])
    return resolutions, len(mentions) / max(time.perf_counter() - start, 1e-9)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings()
    mentions, gold = load_mentions(args.data)
    namespace = args.namespace or f"bench-dedup-{uuid.uuid4().hex[:8]}"
    async with AsyncMemory(settings) as memory:
        dedup = settings.memory.entity_deduplication
        if args.no_embedding:
            dedup = dedup.model_copy(update={"embedding": dedup.embedding.model_copy(update={"enabled": False})})
        resolver = GraphResolver(dedup, memory.embedder)
        await warm_up(memory, resolver)
        report: dict[str, Any] = {}
        try:
            if args.preload:
                report["preload_s"] = round(await preload(memory, namespace, args.preload, resolver), 2)
            resolutions, rate = await stream(memory, namespace, mentions, resolver, args.batch)
        finally:
            if not args.keep:
                await memory.delete_namespace(namespace)
    report = {**score(resolutions, gold, rate), **report, "mentions": len(mentions), "preloaded": args.preload,
              "batch": args.batch, "embedding": not args.no_embedding,
              "namespace": namespace if args.keep else None}
    if args.by_stage:
        report["decided_by"] = stage_counts(resolutions)
    if args.errors:
        for line in errors(mentions, resolutions, gold):
            print(line, file=sys.stderr)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments.parser(__doc__, DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line (the default)")
    parser.add_argument("--preload", type=int, default=0, metavar="N", help="synthetic entities written first")
    parser.add_argument("--batch", type=int, default=1024, help="mentions resolved per transaction")
    parser.add_argument("--no-embedding", action="store_true", help="skip the embedding stage")
    parser.add_argument("--namespace", help="namespace to use (default: a fresh one)")
    parser.add_argument("--keep", action="store_true", help="keep the namespace afterwards")
    args = read_arguments(parser, argv)
    if args is None:
        return 2
    print(json.dumps(asyncio.run(bench(args))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

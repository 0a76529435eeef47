"""Turn search: vector (HNSW, exact fallback) and fulltext (BM25), always inside one namespace."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from kg.embeddings import Embedder
from kg.models import Turn, TurnHit
from kg.store import Store

# Lucene operators and syntax characters; escaped so user text is only ever searched for.
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_VECTOR_OVERFETCH = 10


def lucene_escape(text: str) -> str:
    """User text as a Lucene query of plain terms (operators escaped, AND/OR/NOT lower-cased)."""
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"\b(AND|OR|NOT|TO)\b", lambda m: m.group(1).lower(), escaped).strip()


def scoped(namespace: str, fields: Sequence[str], terms: str, alone: bool = False) -> str:
    """`terms` (escaped by `lucene_escape`) in any of `fields`, among `namespace`'s documents only.

    The namespace clause is required but scores nothing (^0): BM25 ranks by the text alone, and
    Lucene never ranks other tenants' documents (the indexes hold the namespace, migration 0008).
    The Cypher still checks the namespace exactly, and drops hits that scored 0 (only the namespace
    clause matched: the terms were all stop words).

    `alone`: the namespace holds every document of the index (one tenant), so the clause is left
    out: it cost a third of a BM25 query over 100k turns. Were that stale, other tenants' documents
    would share the ranking (as before migration 0008) but still never be returned."""
    if not re.search(r"\w", terms):
        return ""
    text = "+(" + " ".join(f"{f}:({terms})" for f in fields) + ")"
    if alone:
        return text
    quoted = namespace.replace("\\", "\\\\").replace('"', '\\"')
    return f'+namespace:"{quoted}"^0 ' + text


def _hits(rows: list[dict[str, Any]], method: str) -> list[TurnHit]:
    out = []
    for row in rows:
        turn = dict(row["turn"])
        turn["ts"] = turn["ts"].to_native()
        out.append(TurnHit(turn=Turn.model_validate(turn), score=float(row["score"]), method=method))
    return out


async def vector_search(store: Store, embedder: Embedder, namespace: str, query: str, k: int) -> list[TurnHit]:
    [vector] = await asyncio.to_thread(embedder.embed, [query])
    return await vector_search_by(store, namespace, vector, k)


async def vector_search_by(store: Store, namespace: str, vector: list[float], k: int) -> list[TurnHit]:
    rows = await store.read(
        "queries/turns_vector_search", namespace=namespace, vector=vector, k=k, fetch=max(k * _VECTOR_OVERFETCH, 100)
    )
    if len(rows) < k:  # the namespace is a small part of the index: search it exactly
        rows = await store.read("queries/turns_vector_exact", namespace=namespace, vector=vector, k=k)
    return _hits(rows, "vector")


async def fulltext_search(store: Store, namespace: str, query: str, k: int) -> list[TurnHit]:
    lucene = scoped(namespace, ["key_text"], lucene_escape(query))
    if not lucene:
        return []
    rows = await store.read("queries/turns_fulltext_search", namespace=namespace, query=lucene, k=k)
    return _hits(rows, "fulltext")

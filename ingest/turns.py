"""Turns into the graph: session assignment, ids, batched embedding, batched idempotent writes.

Embedding (CPU) and writing (Neo4j) overlap: while batch i is written, batch i+1 is embedded.
Each batch is one transaction that locks its sessions first, so concurrent writers to one
session serialize and turn indexes stay consecutive.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Iterable, Protocol

from kg.core.embedders.base import Embedder
from kg.core.embedders.fallback import FallbackChain
from kg.core.models.turns import IngestReport, Message, attachment_columns
from kg.core.models.values import native
from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx

from .sessions import LastTurn, SessionAssigner, TurnIds, auto_session_id, is_auto, runs
from .turn_keys import embed_keys, turn_key

if TYPE_CHECKING:
    from kg.core.embedders.late import LateEncoder

log = logging.getLogger(__name__)


Revision = tuple[int, Any]  # a session's vector revision and when it moved (epoch ms)


class VectorSink(Protocol):
    """Who keeps turn vectors in memory (`kg.queries.vectors.NamespaceVectors`) hears the vectors a
    write committed, with the revision it left each session at, so a search right after the write
    reloads nothing."""

    def turns_written(self, namespace: str, session_id: str, revision: Revision, rows: list[list[Any]],
                      new: bool) -> None:
        """`rows`: [id, session_id, idx, speaker, ts in epoch µs, follows_question, embedding,
        context_embedding, passage_embeddings, role, key_text, context_text, characters of its text,
        late_tokens], appended at the session's end; `new`: the session had no turns before."""

    def contexts_written(self, namespace: str, session_id: str, revision: Revision,
                         keys: dict[str, tuple[list[float] | None, bool, str]]) -> None:
        """The session's turns' new context keys, by turn id: the key's vector (None: the turn's own
        stands in), whether the turn before it asked a question, and the key's text."""

    def summaries_written(self, namespace: str, rows: list[tuple[str, str | None, str | None]]) -> None:
        """New summary versions of the namespace, as stored: [id, text, keywords] each."""


def revisions(rows: list[dict[str, Any]]) -> dict[tuple[str, str], Revision]:
    """The rows of `sessions/vector_revisions` by (namespace, session id)."""
    return {(r["namespace"], r["id"]): (int(r["revision"]), r["changed"]) for r in rows}


def epoch_us(ts: Any) -> int:
    """A datetime as epoch microseconds (the vector cache's `ts`)."""
    return round(ts.timestamp() * 1_000_000)


@dataclass
class PreparedTurn:
    id: str
    session_id: str
    message: Message
    embedding: list[float] | None = None
    passages: list[float] | None = None  # a long key's later parts' vectors, flattened (kg.ingest.turn_keys)
    embedding_model: str | None = None
    fallback: bool = False  # embedded by the fallback embedder: stored apart from the primary's vectors
    late: bytes | None = None  # the key's token vectors, packed (kg.core.embedders.late); None: late interaction off

    @property
    def key(self) -> str:
        """What is embedded and searched by words: speaker, text, attachments (kg.ingest.turn_keys)."""
        return turn_key(self.message.speaker, self.message.text, self.message.attachments)


class TurnWriter:
    def __init__(self, store: Store, embedder: Embedder, settings: Settings, fallback: Embedder | None = None,
                 sink: VectorSink | None = None, late: LateEncoder | None = None) -> None:
        """`fallback` embeds a batch the primary `embedder` fails on (kg.core.embedders.fallback);
        `sink` hears the vectors each batch committed; `late` encodes each key's tokens too
        (kg.core.embedders.late), beside the embedder."""
        self.store = store
        self.sink = sink
        self.embedder = embedder
        self.late = late
        self.chain = FallbackChain(embedder, fallback)
        self.settings = settings
        self.assigner = SessionAssigner(timedelta(minutes=settings.session.gap_minutes))
        self.ids = TurnIds()
        self.stored_as: dict[str, str] = {}  # turn id -> the id it was stored under (the same message, stored before)

    async def write(
        self, messages: Iterable[Message], on_batch: Callable[[IngestReport], None] | None = None
    ) -> IngestReport:
        """Write a stream of messages; returns what happened (new, existing, sessions)."""
        report = IngestReport()
        sessions: set[tuple[str, str]] = set()
        pending: asyncio.Task[IngestReport] | None = None

        async def finish(task: asyncio.Task[IngestReport]) -> None:
            done = await task
            report.merge(done)
            if on_batch:
                on_batch(done)

        taken: set[str] = set()  # ids met in this write: a repeated message is the turn already met
        async for prepared in self._prepared_batches(messages):
            prepared, repeats = _first_occurrences(prepared, taken)
            if repeats:
                report.merge(IngestReport(received=repeats, existing=repeats))
            stored = await self._same_content(self.store.read, prepared)
            batch = [p for p in prepared if p.id not in stored]
            if stored:
                report.merge(IngestReport(received=len(stored), existing=len(stored)))
                sessions.update((p.message.namespace, stored[p.id]) for p in prepared if p.id in stored)
            sessions.update((p.message.namespace, p.session_id) for p in batch)
            if not batch:
                continue
            embedded = await self._embed(batch)
            if pending is not None:
                await finish(pending)
            pending = asyncio.create_task(self._write_batch(batch, embedded))
        if pending is not None:
            await finish(pending)
        report.sessions = len(sessions)
        return report

    async def _prepared_batches(self, messages: Iterable[Message]) -> AsyncIterator[list[PreparedTurn]]:
        size = self.settings.ingest.batch_size
        chunk: list[Message] = []
        for message in messages:
            chunk.append(message)
            if len(chunk) >= size:
                yield await self._prepare(chunk)
                chunk = []
        if chunk:
            yield await self._prepare(chunk)

    async def _prepare(self, messages: list[Message]) -> list[PreparedTurn]:
        probes = self.assigner.needs_probe(messages)
        if probes:
            rows = await self.store.read(
                "turns/last_before", probes=[{"namespace": ns, "ts": ts} for ns, ts in probes.items()]
            )
            found = {r["namespace"]: LastTurn(r["session_id"], native(r["ts"])) for r in rows}
            for namespace in probes:
                self.assigner.seed(namespace, found.get(namespace))
        prepared = []
        for m in messages:
            session_id = self.assigner.assign(m)
            prepared.append(PreparedTurn(self.ids.next(m, session_id), session_id, m))
        return prepared

    async def _same_content(self, run: Callable[..., Any], batch: list[PreparedTurn]) -> dict[str, str]:
        """Messages without a session id already stored (by content, in any session), as turn id ->
        the stored turn's session id: their identity must not depend on the session they were
        assigned, which depends on arrival order."""
        auto = [{"key": p.id, "namespace": p.message.namespace, "ts": p.message.ts, "role": p.message.role,
                 "speaker": p.message.speaker or "", "text": p.message.text}
                for p in batch if p.message.session_id is None]
        if not auto:
            return {}
        rows = await run("turns/same_content", turns=auto)
        self.stored_as.update((r["key"], r["id"]) for r in rows)
        return {r["key"]: r["session_id"] for r in rows}

    async def _continue_sessions(self, tx: Tx, todo: list[PreparedTurn]) -> None:
        """Under the namespace's TurnLock: a batch that opened a session by the gap continues the
        stored session its first message follows within the gap instead, when a concurrent writer
        stored that turn after this batch was prepared (two writers of one conversation: one session)."""
        gap = self.assigner.gap
        firsts: dict[str, PreparedTurn] = {}
        for p in sorted((p for p in todo if p.message.session_id is None), key=lambda p: p.message.ts):
            firsts.setdefault(p.message.namespace, p)
        opened = {ns: p for ns, p in firsts.items() if p.session_id == auto_session_id(p.message.ts)}
        if not opened:
            return
        rows = await tx.run("turns/last_before",
                            probes=[{"namespace": ns, "ts": p.message.ts} for ns, p in opened.items()])
        for row in rows:
            first = opened[row["namespace"]]
            ts, joined = native(row["ts"]), row["session_id"]
            if joined == first.session_id or first.message.ts - ts > gap:
                continue
            old = first.session_id
            for p in todo:
                if p.message.namespace == first.message.namespace and p.session_id == old \
                        and p.message.session_id is None:
                    p.session_id = joined
            last = self.assigner.last.get(first.message.namespace)
            if last is not None and last.session_id == old:
                self.assigner.last[first.message.namespace] = LastTurn(joined, last.ts)

    async def _resegment(self, tx: Tx, todo: list[PreparedTurn]) -> set[tuple[str, str]]:
        """Under the namespace's TurnLock: the batch's messages in automatic sessions and the stored
        automatic sessions near them, segmented again by the gap alone (`kg.ingest.sessions.runs`), so
        the sessions do not depend on arrival order. Each message goes to its run's session; stored
        sessions of one run are merged under the run's name. Returns the sessions merged into."""
        gap, merged = self.assigner.gap, set()
        by_namespace: dict[str, list[PreparedTurn]] = {}
        for p in todo:
            if p.message.session_id is None and is_auto(p.session_id):
                by_namespace.setdefault(p.message.namespace, []).append(p)
        for namespace, turns in sorted(by_namespace.items()):
            times = [p.message.ts for p in turns]
            rows = await tx.run("sessions/auto_near", namespace=namespace, lo=min(times) - gap,
                                hi=max(times) + gap)
            stored = [(r["id"], native(r["started_at"]), native(r["ended_at"])) for r in rows]
            for run in runs(stored, times, gap):
                for p in turns:
                    if run.start <= p.message.ts <= run.end:
                        p.session_id = run.target
                if run.stored and run.stored != [run.target]:
                    await tx.run("sessions/merge", namespace=namespace, target=run.target, sources=run.stored)
                    await tx.run("sessions/renumber", namespace=namespace, sessions=[run.target])
                    merged.add((namespace, run.target))
                last = self.assigner.last.get(namespace)
                if last is not None and (last.session_id in run.stored or run.start <= last.ts <= run.end):
                    self.assigner.last[namespace] = LastTurn(run.target, last.ts)
        return merged

    async def _embed(self, batch: list[PreparedTurn]) -> tuple[set[str], int]:
        """Embeds the turns not stored yet; returns the ids already stored and the truncation count."""
        rows = await self.store.read("turns/existing", ids=[p.id for p in batch])
        existing = {r["id"] for r in rows}
        todo = [p for p in batch if p.id not in existing]
        if not todo:
            return existing, 0
        models: list[str] = []

        async def embed(texts: list[str]) -> list[list[float]]:
            embedded = await self.chain.embed(texts)
            models.append(embedded.model)
            return embedded.vectors

        # the token vectors on the late encoder's threads while the embedder's run
        tokens = self.late.submit_keys([p.key for p in todo], self.settings.ingest.max_passages) \
            if self.late is not None else None
        keyed = await embed_keys(self.embedder, [p.key for p in todo], self.settings.ingest, embed)
        if tokens is not None:
            packed: list[bytes] = await asyncio.wrap_future(tokens)
            for p, key_tokens in zip(todo, packed):
                p.late = key_tokens
        fallback = self.chain.is_fallback(models[0])
        for p, kv in zip(todo, keyed):
            # the fallback's vectors are compared with nothing but its own index: no passages for them
            p.embedding, p.passages, p.embedding_model, p.fallback = kv.vector, None if fallback else kv.passages, \
                models[0], fallback
            if kv.cut:
                log.warning("turn %s has more than %d passages; the rest of it is searched by its words only",
                            p.id, self.settings.ingest.max_passages)
        return existing, sum(kv.cut for kv in keyed)

    async def _write_batch(self, batch: list[PreparedTurn], embedded: tuple[set[str], int]) -> IngestReport:
        existing, truncated = embedded
        new = [p for p in batch if p.id not in existing and p.embedding is not None]
        report = IngestReport(
            received=len(batch), existing=len(batch) - len(new), truncated_for_embedding=truncated
        )
        if not new:
            return report
        auto_namespaces = sorted({p.message.namespace for p in new if p.message.session_id is None})

        heard: list[tuple[tuple[str, str], Revision, list[list[Any]], bool]] = []

        async def work(tx: Tx) -> int:
            heard.clear()  # a retried transaction starts again
            written_meanwhile: set[str] = set()
            if auto_namespaces:  # queue behind concurrent writers of the same messages, then look again
                await tx.run("turns/lock", namespaces=auto_namespaces)
                written_meanwhile = set(await self._same_content(tx.run, new))
            todo = [p for p in new if p.id not in written_meanwhile]
            merged: set[tuple[str, str]] = set()
            if auto_namespaces:
                await self._continue_sessions(tx, todo)
                merged = await self._resegment(tx, todo)
            state = {(r["namespace"], r["id"]): r
                     for r in await tx.run("sessions/lock", sessions=_spans(todo))} if todo else {}
            still_new = written_meanwhile | {
                r["id"] for r in await tx.run("turns/existing", ids=[p.id for p in todo])}
            rows: list[dict[str, Any]] = []
            tails: dict[tuple[str, str], tuple[int, str]] = {}
            reorder: set[tuple[str, str]] = set()
            for p in sorted(new, key=lambda p: (p.message.namespace, p.session_id, p.message.ts)):
                if p.id in still_new:  # written by a concurrent writer since we looked
                    continue
                key = (p.message.namespace, p.session_id)
                count, prev = tails.get(key, (state[key]["message_count"], state[key]["last_turn_id"]))
                rows.append({
                    "id": p.id, "namespace": key[0], "session_id": key[1], "idx": count,
                    "role": p.message.role, "speaker": p.message.speaker, "text": p.message.text,
                    "ts": p.message.ts, "external_id": p.message.external_id, "verbatim": p.message.verbatim,
                    "embedding": p.embedding, "passages": p.passages,
                    "embedding_model": p.embedding_model, "fallback": p.fallback, "prev_id": prev, "late": p.late,
                    "key_text": p.key, **attachment_columns(p.message.attachments),
                    "trust": None if p.message.trust == "trusted" else p.message.trust,  # marked when untrusted
                })
                tails[key] = (count + 1, p.id)
                ended = state[key]["ended_before"]
                if ended is not None and p.message.ts < native(ended):  # earlier than the session's tail
                    reorder.add(key)
            if not rows:
                return 0
            await tx.run("turns/write", turns=rows)
            await tx.run("sessions/refresh", sessions=[
                {"namespace": k[0], "id": k[1], "message_count": c, "last_turn_id": last}
                for k, (c, last) in tails.items()
            ])
            for namespace in sorted({ns for ns, _ in reorder}):
                await tx.run("sessions/renumber", namespace=namespace,
                             sessions=sorted(id for ns, id in reorder if ns == namespace))
            if self.sink is not None:
                # sessions renumbered or merged into are left to the cache's next reload
                told = [k for k in tails if k not in reorder and k not in merged]
                now_at = revisions(await tx.run("sessions/vector_revisions", sessions=[list(k) for k in told]))
                for key in told:
                    vectors = [[r["id"], r["session_id"], r["idx"], r["speaker"], epoch_us(r["ts"]), False,
                                r["embedding"], None, r["passages"], r["role"], r["key_text"], None, len(r["text"]),
                                r["late"]]
                               for r in rows if (r["namespace"], r["session_id"]) == key and not r["fallback"]]
                    heard.append((key, now_at[key], vectors, state[key]["message_count"] == 0))
            return len(rows)

        written = await self.store.transaction(work)
        if self.sink is not None:
            for (namespace, session_id), revision, vectors, fresh in heard:
                self.sink.turns_written(namespace, session_id, revision, vectors, fresh)
        report.written = written
        report.embedded_by_fallback = written if any(p.fallback for p in new) else 0
        report.existing = len(batch) - written
        return report


def _first_occurrences(batch: list[PreparedTurn], taken: set[str]) -> tuple[list[PreparedTurn], int]:
    """The turns of `batch` whose id is not in `taken` (which they join), and how many were repeats:
    identical messages are one turn, in one batch as across requests."""
    first = []
    for p in batch:
        if p.id not in taken:
            taken.add(p.id)
            first.append(p)
    return first, len(batch) - len(first)


def _spans(turns: list[PreparedTurn]) -> list[dict[str, Any]]:
    """The sessions the turns go to with the time they span, sorted: the order sessions are locked in."""
    spans: dict[tuple[str, str], dict[str, Any]] = {}
    for p in turns:
        key = (p.message.namespace, p.session_id)
        span = spans.setdefault(key, {"namespace": key[0], "id": key[1],
                                      "started_at": p.message.ts, "ended_at": p.message.ts})
        span["started_at"] = min(span["started_at"], p.message.ts)
        span["ended_at"] = max(span["ended_at"], p.message.ts)
    return [spans[k] for k in sorted(spans)]

"""Summaries into the graph: triggers, context keys, hierarchical rollup, versioned replacement.

A session is summarized when it closes (`close`), when it has been idle for `[session]
idle_minutes` (it is closed then), or when `summarize_every_messages` turns arrived since its
last summary (`due`). The session summary always covers the session from its first turn. A new
version replaces the current one of its slot: version + 1, the old one expired and kept.

With an LLM, an open session's summary is kept current by the offline (extractive) summarizer;
the LLM summarizes it when it closes, or while open at most every `[session]
llm_summary_every_messages` turns (docs/llm-cost.md). The calls are added to the session node.
With `[memory.indexing] passes = 3`, a closed session's summary (pass 1) then gets the signals of
passes 2 and 3 (`kg.ingest.summaries.passes`), unless it holds current ones.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import datetime, timedelta, timezone
from typing import Any

from kg.core.embedders.base import Embedder, embed_async
from kg.core.llm.usage import metering
from kg.core.models.recall import OFFLINE_MODEL, Summary, summary_from_props
from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.summaries import SummaryDraft
from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx

from ..turn_keys import attachment_text, stored_attachments
from ..turns import VectorSink, revisions
from .keys import context_texts, context_vectors, short_replies
from .models import Summarizer
from .offline import OfflineSummarizer
from .passes import Passes, stale
from .plan import SESSION_SLOT, windows
from .steps import Done, Pending, Run, chunk_turns, due_groups, mark_row

log = logging.getLogger(__name__)
DUE_PAGE = 500


class SessionSummarizer:
    def __init__(self, store: Store, embedder: Embedder, settings: Settings, summarizer: Summarizer,
                 passes: Passes | None = None, sink: VectorSink | None = None) -> None:
        """`passes`: passes 2 and 3 of the enrichment, run when a session closes (`passes_for`);
        `sink` hears the context-key vectors written."""
        self.store = store
        self.sink = sink
        self.passes = passes
        self.embedder = embedder
        self.settings = settings
        self.summarizer = summarizer
        self.interim: Summarizer = summarizer  # what keeps an open session's summary current between LLM ones
        if summarizer.model != OFFLINE_MODEL:
            self.interim = OfflineSummarizer(settings.memory.summaries, embedder)

    # -- triggers ---------------------------------------------------------------------------
    async def close(self, namespace: str, session_id: str, now: datetime | None = None) -> Summary | None:
        """Close the session and summarize it (None: the session has no turns)."""
        now = now or datetime.now(timezone.utc)
        if self._batches():
            found = await self._batch([(namespace, session_id, True)], now)
            return found[0] if found else None
        return await self.summarize(namespace, session_id, now=now, open_=False, close=True)

    async def due(self, namespace: str | None = None, now: datetime | None = None) -> list[Summary]:
        """Summarize every due session (of `namespace`, or of all); idle ones are closed first. With the
        offline summarizer, sessions go in batches of about `[ingest] batch_size` turns, each batch
        read in one transaction and written in another (`_batch`)."""
        now = now or datetime.now(timezone.utc)
        cfg = self.settings.session
        done: list[Summary] = []
        gate = asyncio.Semaphore(cfg.close_concurrency)
        batches = self._batches()

        async def one(rows: list[dict[str, Any]]) -> list[Summary]:
            async with gate:
                if batches:
                    return await self._batch([(r["namespace"], r["id"], r["closes"]) for r in rows], now)
                [row] = rows
                found = await self.summarize(row["namespace"], row["id"], now=now, open_=not row["closes"],
                                             close=row["closes"])
                return [found] if found is not None else []

        while True:
            rows = await self.store.read(
                "sessions/due", namespace=namespace, idle_before=now - timedelta(minutes=cfg.idle_minutes),
                every=cfg.summarize_every_messages, limit=DUE_PAGE,
            )
            groups = due_groups(rows, self.settings.ingest.batch_size) if batches else [[r] for r in rows]
            tasks = [asyncio.ensure_future(one(group)) for group in groups]
            try:
                found = await asyncio.gather(*tasks)
            except BaseException:  # the first failure is raised as itself; the page's others are cancelled
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
            done.extend(summary for summaries in found for summary in summaries)
            if len(rows) < DUE_PAGE:
                return done

    def _batches(self) -> bool:
        """Whether sessions are summarized in batches: by the offline summarizer, with no LLM behind it,
        no enrichment passes and no plan of its own (it calls nobody, and embeds nothing)."""
        return (self.summarizer is self.interim and self.passes is None and self.summarizer.model == OFFLINE_MODEL
                and getattr(self.summarizer, "plan", None) is None)

    async def _batch(self, sessions: list[tuple[str, str, bool]], now: datetime) -> list[Summary]:
        """Summarize `sessions` ((namespace, id, close) each) with the offline summarizer: one
        transaction closes them and reads their turns and current summaries, one writes every context
        key, summary and session mark. A session of several windows (its summary is a rollup) goes
        through `summarize` after the batch. KeyError: a session to close does not exist."""
        keys = [{"namespace": ns, "id": sid} for ns, sid, _ in sessions]
        closing = [{"namespace": ns, "id": sid} for ns, sid, close in sessions if close]

        async def read(tx: Tx) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            if closing:
                await _close(tx, closing, now)
            turn_rows = await tx.rows("sessions/index_turns", sessions=keys)
            current = await tx.rows("summaries/current_of_sessions", sessions=keys) if turn_rows else []
            return turn_rows, current

        turn_rows, current_rows = await self.store.transaction(read)
        by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in turn_rows:
            by_session.setdefault((r["namespace"], r["session_id"]), []).append(r)
        current: dict[tuple[str, str], dict[str, Summary]] = {}
        for r in current_rows:
            summary = summary_from_props(r["summary"])
            current.setdefault((r["namespace"], r["session_id"]), {})[summary.slot] = summary
        cfg = self.settings.memory.summaries
        context: list[dict[str, Any]] = []
        writes: list[Pending] = []
        reused: dict[tuple[str, str], Summary] = {}
        longer: list[tuple[str, str, bool]] = []
        made: dict[tuple[str, str], list[ChunkTurn]] = {}
        for ns, sid, close in sessions:
            rows = by_session.get((ns, sid))
            if not rows:
                continue
            turns = chunk_turns(rows)
            if len(windows(turns, cfg.window_turns, cfg.token_budget)) != 1:
                longer.append((ns, sid, close))
                continue
            made[(ns, sid)] = turns
            vectors = {r["id"]: r["embedding"] for r in rows}
            context += self._context_rows(turns, vectors, rows)
            run = Run(self, self.summarizer, ns, sid, turns, vectors, current.get((ns, sid), {}), now, not close)
            old = run.reusable(SESSION_SLOT, turns[0].idx, turns[-1].idx + 1, self.summarizer.prompt_version)
            if old is not None:
                reused[(ns, sid)] = old
                continue
            draft = await self.summarizer.summarize_turns(sid, turns, [vectors.get(t.id) for t in turns], not close)
            writes.append(self._pending(ns, sid, "session", SESSION_SLOT, 0, turns, draft,
                                        self.summarizer.prompt_version, [], self.summarizer.model))
        embedded = [await p.vector() for p in writes]
        ordered = sorted(made)  # one lock order for every writer

        async def write(tx: Tx) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            await tx.run("summaries/session_lock", sessions=[{"namespace": ns, "id": sid} for ns, sid in ordered])
            revised: list[dict[str, Any]] = []
            size = self.settings.ingest.batch_size
            for start in range(0, len(context), size):
                revised += await tx.run("turns/set_context", model=self.embedder.name,
                                        rows=context[start : start + size])
            rows = await tx.run("summaries/replace", rows=[p.row(v) for p, v in zip(writes, embedded)], now=now)
            versions = {**{k: s.version for k, s in reused.items()},
                        **{(r["namespace"], r["session_id"]): r["summary"]["version"] for r in rows}}
            await tx.run("summaries/expire_slots", sessions=[{"namespace": ns, "id": sid, "keep": [SESSION_SLOT]}
                                                             for ns, sid in ordered], now=now)
            await tx.run("sessions/mark_summarized", sessions=[mark_row(ns, sid, made[(ns, sid)], versions[(ns, sid)])
                                                               for ns, sid in ordered], now=now)
            return revised, rows

        revised, written = (await self.store.transaction(write)) if made else ([], [])
        self._tell_sink(revised, context)
        self._tell_summaries([r["summary"] for r in written])
        summaries = {**reused, **{(r["namespace"], r["session_id"]): summary_from_props(r["summary"]) for r in written}}
        for ns, sid, close in longer:  # closed and read above: what is left is the summarizing
            found = await self.summarize(ns, sid, now=now, open_=not close,
                                         read=(by_session[(ns, sid)], current.get((ns, sid), {})))
            if found is not None:
                summaries[(ns, sid)] = found
        return [summaries[(ns, sid)] for ns, sid, _ in sessions if (ns, sid) in summaries]

    # -- one session ------------------------------------------------------------------------
    async def summarize(self, namespace: str, session_id: str, now: datetime, open_: bool,
                        close: bool = False, read: tuple[list[dict[str, Any]], dict[str, Summary]] | None = None
                        ) -> Summary | None:
        """Summarize the session from its first turn; `close` closes it first (KeyError: no such session).
        `read`: its turn rows and current summaries by slot, read already in the transaction that closed it
        (`_batch`); else they are read here."""
        rows, current = read if read is not None else await self._read(namespace, session_id, now, close)
        if not rows:
            return None
        turns = chunk_turns(rows)
        vectors = {r["id"]: r["embedding"] for r in rows}
        # The context keys are written while the summary is made (its vector embedded): they share nothing
        # but the session node, which each write locks in turn.
        keys = asyncio.ensure_future(self._context_keys(turns, vectors, rows))
        enrich = not open_ and self.passes is not None
        try:
            chosen = await self._summarizer(namespace, session_id, len(turns), open_)
            with metering() as meter:
                done = Done(self, namespace, session_id, turns, keys, meter, now)
                run = Run(self, chosen, namespace, session_id, turns, vectors, current, now, open_,
                          None if enrich else done)
                done.kept = run.kept
                summary = await run.session_summary()
                if enrich:
                    summary = await self._enrich(namespace, session_id, turns, summary)
        finally:
            await asyncio.gather(keys, return_exceptions=True)  # the keys stand whatever the summary met
        keys.result()  # ... and a failed key write fails the summarization
        if not done.written:  # the session summary was reused, or enriched after its write
            await self.store.transaction(lambda tx: done.write(tx, summary.version))
        return summary

    async def _read(self, namespace: str, session_id: str, now: datetime, close: bool
                    ) -> tuple[list[dict[str, Any]], dict[str, Summary]]:
        """In one transaction: close the session (when `close`), then its turns and its current summaries
        (by slot)."""
        async def work(tx: Tx) -> tuple[list[dict[str, Any]], dict[str, Summary]]:
            key = [{"namespace": namespace, "id": session_id}]
            if close:
                await _close(tx, key, now)
            rows = await tx.rows("sessions/index_turns", sessions=key)
            if not rows:
                return rows, {}
            current = [summary_from_props(r["summary"]) for r in await tx.rows("summaries/current_of_sessions",
                                                                                sessions=key)]
            return rows, {s.slot: s for s in current}

        return await self.store.transaction(work)

    async def _enrich(self, namespace: str, session_id: str, turns: list[ChunkTurn], summary: Summary) -> Summary:
        """Passes 2 and 3 on the session summary (pass 1), unless it holds their current signals."""
        assert self.passes is not None
        if not stale(self.passes, summary):
            return summary
        found = await self.passes.enrich(session_id, turns, summary)
        if found is None:
            return summary
        signals, quality = found
        rows = await self.store.write("summaries/set_signals", namespace=namespace, id=summary.id,
                                      signals=signals.model_dump_json(), quality=quality)
        return summary_from_props(rows[0]["summary"]) if rows else summary

    async def _summarizer(self, namespace: str, session_id: str, count: int, open_: bool) -> Summarizer:
        """Closed: the summarizer. Open: the LLM's (live) one when `llm_summary_every_messages`
        turns came since the last LLM summary, else the interim one."""
        if not open_ or self.interim is self.summarizer:
            return self.summarizer
        every = self.settings.session.llm_summary_every_messages
        rows = await self.store.read("summaries/of_session", namespace=namespace, session_id=session_id,
                                     include_expired=True)
        done = [summary_from_props(r["summary"]) for r in rows]
        last = max((s.message_range[1] for s in done if s.slot == SESSION_SLOT and s.model != OFFLINE_MODEL),
                   default=0)
        if every and count - last >= every:
            return getattr(self.summarizer, "live", self.summarizer)
        return self.interim

    def _context_rows(self, turns: list[ChunkTurn], own: dict[str, list[float] | None],
                      stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each turn's context key (kg.ingest.summaries.keys): its text, and a vector made of the
        session's stored vectors (nothing is embedded), where the text or the reply flag differs from
        the stored one (`stored`: the session's `sessions/index_turns` rows)."""
        cfg = self.settings.memory.summaries
        texts = context_texts(turns, cfg.context_turns, [attachment_text(stored_attachments(r)) for r in stored])
        keys = context_vectors([own.get(t.id) for t in turns], cfg.context_turns, cfg.context_weight)
        asks = short_replies(turns)
        before = {r["id"]: (r["context_text"], r["follows_question"]) for r in stored}
        return [{"id": t.id, "text": x, "follows_question": a, "embedding": v}
                for t, x, a, v in zip(turns, texts, asks, keys) if before.get(t.id) != (x, a)]

    async def _context_keys(self, turns: list[ChunkTurn], own: dict[str, list[float] | None],
                            stored: list[dict[str, Any]]) -> None:
        """Write the session's changed context keys (`_context_rows`), a page per transaction."""
        changed = self._context_rows(turns, own, stored)
        size = self.settings.ingest.batch_size
        for start in range(0, len(changed), size):
            page = changed[start : start + size]
            self._tell_sink(await self.store.write("turns/set_context", model=self.embedder.name, rows=page), page)

    def _tell_sink(self, revised: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
        """The sink hears each session's new context keys at the revision their write left."""
        if self.sink is None or not revised:
            return
        keys = {r["id"]: (r["embedding"], r["follows_question"], r["text"]) for r in rows}
        for (namespace, session_id), revision in revisions(revised).items():
            self.sink.contexts_written(namespace, session_id, revision, keys)

    def _tell_summaries(self, written: list[dict[str, Any]]) -> None:
        """The sink hears the summary versions a write committed (their stored props), by namespace."""
        if self.sink is None:
            return
        by_namespace: dict[str, list[tuple[str, str | None, str | None]]] = {}
        for props in written:
            by_namespace.setdefault(props["namespace"], []).append((props["id"], props.get("text"), props.get("keywords")))
        for namespace, rows in by_namespace.items():
            self.sink.summaries_written(namespace, rows)

    def _pending(self, namespace: str, session_id: str, kind: str, slot: str, level: int, covered: list[ChunkTurn],
                 draft: SummaryDraft, prompt_version: str, children: list[str], model: str | None) -> "Pending":
        """What a new version of the summary in `slot` writes, its vector begun (`Pending.vector`)."""
        text = draft.text[: self.settings.ingest.max_embed_chars]
        early = draft.early_vector(text, self.embedder.name)
        props = {
            **draft.model_dump(), "kind": kind, "slot": slot, "level": level,
            "keywords": "; ".join([*draft.topics, *draft.entities]),
            "message_range": [covered[0].idx, covered[-1].idx + 1],
            "started_at": covered[0].ts, "ended_at": covered[-1].ts, "model": model or self.summarizer.model,
            "prompt_version": prompt_version, "embedding_model": self.embedder.name,
            "quoted_turns": list(early.quoted) if early is not None and early.quoted else None,
        }
        prefix = "sum-" + hashlib.sha256(f"{namespace}\x1f{session_id}\x1f{slot}".encode()).hexdigest()[:20]
        vectors = early.vectors if early is not None else asyncio.ensure_future(embed_async(self.embedder, [text]))
        return Pending(namespace, session_id, props, prefix, children, vectors)

    async def write(
        self, namespace: str, session_id: str, kind: str, slot: str, level: int, covered: list[ChunkTurn],
        draft: SummaryDraft, prompt_version: str, children: list[str], now: datetime, model: str | None = None,
        done: Done | None = None,
    ) -> Summary:
        """Write a new version of the summary in `slot`; `done`: the session's last write, which marks the
        session summarized in the same transaction."""
        pending = self._pending(namespace, session_id, kind, slot, level, covered, draft, prompt_version, children,
                                model)
        vector = await pending.vector()
        if done is not None:
            await done.ready()

        async def work(tx: Tx) -> dict[str, Any]:
            await tx.run("summaries/session_lock", sessions=[{"namespace": namespace, "id": session_id}])
            rows = await tx.run("summaries/replace", rows=[pending.row(vector)], now=now)
            if done is not None:
                await done.write(tx, rows[0]["summary"]["version"])
            return rows[0]["summary"]

        props = await self.store.transaction(work)
        self._tell_summaries([props])
        return summary_from_props(props)


async def _close(tx: Tx, sessions: list[dict[str, Any]], now: datetime) -> None:
    """Close `sessions` ({namespace, id} each); KeyError naming the first that does not exist."""
    found = {(r["namespace"], r["id"]) for r in await tx.run("sessions/close", sessions=sessions, now=now)}
    missing = [k for k in sessions if (k["namespace"], k["id"]) not in found]
    if missing:
        raise KeyError(f"no session {missing[0]['id']!r} in namespace {missing[0]['namespace']!r}")

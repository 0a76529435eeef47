"""The steps of one summarization (`kg.ingest.summaries.writer`): a run over one session's windows and
rollups, what ends it in the session summary's transaction, and the rows the batched sweep writes."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Protocol

from kg.core.models.recall import Summary
from kg.core.models.values import native
from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.summaries import Part, SummaryDraft
from kg.core.settings.tree import Settings
from kg.core.store.store import Tx

from .models import Summarizer
from .plan import SESSION_SLOT, fits_one_call, meta_slot, rollup_groups, window_slot, windows


class Writer(Protocol):
    """What a run asks of its summarizer (`kg.ingest.summaries.writer.SessionSummarizer`)."""

    settings: Settings

    async def write(self, namespace: str, session_id: str, kind: str, slot: str, level: int,
                    covered: list[ChunkTurn], draft: SummaryDraft, prompt_version: str, children: list[str],
                    now: datetime, model: str | None = None, done: Done | None = None) -> Summary: ...


class Pending:
    """A summary version to write: its properties and its vector (a future: made of the quoted turns'
    vectors, or being embedded)."""

    def __init__(self, namespace: str, session_id: str, props: dict[str, Any], prefix: str, children: list[str],
                 vectors: asyncio.Future[list[list[float]]]) -> None:
        self.namespace, self.session_id, self.props, self.prefix = namespace, session_id, props, prefix
        self.children, self._vectors = children, vectors

    async def vector(self) -> list[float]:
        [vector] = await self._vectors
        return vector

    def row(self, vector: list[float]) -> dict[str, Any]:
        """The row of `summaries/replace`."""
        return {"namespace": self.namespace, "session_id": self.session_id, "props": self.props,
                "id_prefix": self.prefix, "children": self.children, "embedding": vector}


def chunk_turns(rows: list[dict[str, Any]]) -> list[ChunkTurn]:
    """A session's `sessions/index_turns` rows as the summarizers read them."""
    return [ChunkTurn(id=r["id"], idx=r["idx"], role=r["role"], speaker=r["speaker"], text=r["text"],
                      ts=native(r["ts"])) for r in rows]


def due_groups(rows: list[dict[str, Any]], turns: int) -> list[list[dict[str, Any]]]:
    """Due sessions in consecutive groups of about `turns` turns (a larger session is a group alone)."""
    groups: list[list[dict[str, Any]]] = []
    held = turns
    for row in rows:
        if held + row["turns"] > turns:
            groups.append([])
            held = 0
        groups[-1].append(row)
        held += row["turns"]
    return groups


def mark_row(namespace: str, session_id: str, turns: list[ChunkTurn], version: int) -> dict[str, Any]:
    """The row of `sessions/mark_summarized`."""
    return {"namespace": namespace, "id": session_id, "count": len(turns), "version": version,
            "speakers": sorted({t.speaker for t in turns if t.speaker})}


class Done:
    """What ends a summarization, in the transaction of the session summary's write when it makes one:
    the LLM calls counted, the slots the plan no longer has expired, the session marked summarized."""

    def __init__(self, owner: Writer, namespace: str, session_id: str, turns: list[ChunkTurn],
                 keys: asyncio.Future[None], meter: Any, now: datetime) -> None:
        self.o, self.namespace, self.session_id, self.turns = owner, namespace, session_id, turns
        self.keys, self.meter, self.now = keys, meter, now
        self.kept: set[str] = set()  # the run's slots (`Run.kept`)
        self.written = False

    async def ready(self) -> None:
        """Before the transaction: the context keys written (a session marked summarized has them; their
        write locks the session too, so it is never awaited inside)."""
        await self.keys

    async def write(self, tx: Tx, version: int) -> None:
        if self.meter.calls:
            await tx.run("sessions/add_llm_usage", namespace=self.namespace, session_id=self.session_id,
                         **self.meter.totals())
        await tx.run("summaries/expire_slots", sessions=[{"namespace": self.namespace, "id": self.session_id,
                                                          "keep": sorted(self.kept)}], now=self.now)
        await tx.run("sessions/mark_summarized", sessions=[mark_row(self.namespace, self.session_id, self.turns, version)],
                     now=self.now)
        self.written = True


class Run:
    """One summarization of one session: windows, rollups, the session summary; reuses every
    current summary whose slot, range, model and prompt are unchanged."""

    def __init__(self, owner: Writer, summarizer: Summarizer, namespace: str, session_id: str,
                 turns: list[ChunkTurn], vectors: dict[str, list[float] | None], current: dict[str, Summary],
                 now: datetime, open_: bool, done: Done | None = None) -> None:
        """`done`: what the session summary's write also does (`Done`), None to leave it to the caller."""
        self.o, self.s, self.namespace, self.session_id, self.turns = owner, summarizer, namespace, session_id, turns
        self.vectors, self.current, self.now, self.open_, self.done = vectors, current, now, open_, done
        self.cfg = owner.settings.memory.summaries
        self.by_idx = {t.idx: t for t in turns}
        self.kept: set[str] = set()

    def reusable(self, slot: str, start: int, end: int, prompt_version: str) -> Summary | None:
        old = self.current.get(slot)
        if old and old.message_range == (start, end) and old.model == self.s.model \
                and old.prompt_version == prompt_version:
            return old
        return None

    async def _from_turns(self, kind: str, slot: str, run: list[ChunkTurn]) -> Summary:
        self.kept.add(slot)
        version = self.s.prompt_version
        old = self.reusable(slot, run[0].idx, run[-1].idx + 1, version)
        if old:
            return old
        draft = await self.s.summarize_turns(self.session_id, run, [self.vectors.get(t.id) for t in run], self.open_)
        return await self.o.write(self.namespace, self.session_id, kind, slot, 0, run, draft, version, [], self.now,
                                  self.s.model, self._done(slot))

    async def _from_parts(self, kind: str, slot: str, level: int, parts: list[Part]) -> Summary:
        self.kept.add(slot)
        version = self.s.rollup_prompt_version
        old = self.reusable(slot, parts[0].start, parts[-1].end, version)
        if old:
            return old
        draft = await self.s.rollup(self.session_id, parts, self.open_)
        covered = [self.by_idx[parts[0].start], self.by_idx[parts[-1].end - 1]]
        return await self.o.write(self.namespace, self.session_id, kind, slot, level, covered, draft, version,
                                  [p.id for p in parts], self.now, self.s.model, self._done(slot))

    def _done(self, slot: str) -> Done | None:
        """What the write of `slot` also does: the session's last write for the session summary only."""
        return self.done if slot == SESSION_SLOT else None

    async def session_summary(self) -> Summary:
        plan = getattr(self.s, "plan", None)  # the session call's windows are its chunks
        cuts = plan(self.namespace, self.session_id, self.turns) if plan else \
            windows(self.turns, self.cfg.window_turns, self.cfg.token_budget)
        if len(cuts) == 1:
            return await self._from_turns("session", SESSION_SLOT, cuts[0])
        parts = [part_of(await self._from_turns("window", window_slot(w[0].idx), w)) for w in cuts]
        level = 1
        while not fits_one_call(parts, self.cfg.rollup_fanout, self.cfg.token_budget):
            groups = rollup_groups(parts, self.cfg.rollup_fanout, self.cfg.token_budget)
            if all(len(g) == 1 for g in groups):  # each part alone fills the budget: shorten them
                parts = [shortened(p, self.cfg.token_budget // self.cfg.rollup_fanout) for p in parts]
                continue
            parts = [g[0] if len(g) == 1 else
                     part_of(await self._from_parts("meta", meta_slot(level, g[0].start), level, g)) for g in groups]
            level += 1
        return await self._from_parts("session", SESSION_SLOT, level, parts)


def part_of(summary: Summary) -> Part:
    start, end = summary.message_range
    return Part(id=summary.id, slot=summary.slot, start=start, end=end, text=summary.text,
                topics=tuple(summary.topics))


def shortened(part: Part, tokens: int) -> Part:
    keep = max(40, tokens * 4 - 20)
    return Part(id=part.id, slot=part.slot, start=part.start, end=part.end, text=part.text[:keep], topics=part.topics)

"""MCP tools for searching a namespace: turns, sessions and memories by the memory's retriever, and
`recall` (turns, facts and summaries ranked by one score)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from kg.core.models.limits import K, QueryText, Timestamp
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit
from kg.core.models.turns import instant
from kg.core.vocabulary import RecipeChoice
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def search_turns(namespace: str, query: QueryText, ctx: Context, k: K = 10,
                           recipe: RecipeChoice | None = None, as_of: Timestamp | None = None,
                           now: Timestamp | None = None) -> list[RankedTurn]:
        """Past conversation turns that best answer `query`, best first, by the memory's default
        retriever (hierarchical: words, meaning, speakers and dates, session by session) unless
        `recipe` names another (flat: by meaning only; bm25: by words only). `k`: 1 to 100. `as_of`
        hides later turns; `now`: when the question is asked ("last month" counts back from it;
        default as_of, else the present). Hits with `degraded: true` were found while the embedding
        model was down, by words and a fallback model only (`degraded_reason` says why): a relevant
        turn may be missing."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.search_turns(namespace, query, k, recipe, instant(as_of), instant(now))

    @server.tool()
    async def search_sessions(namespace: str, query: QueryText, ctx: Context, k: K = 5,
                              recipe: RecipeChoice | None = None, as_of: Timestamp | None = None,
                              now: Timestamp | None = None) -> list[SessionHit]:
        """Past sessions about `query` ("what did we discuss about X?"), each with its summary and
        best-matching turns, best first (`recipe`, `as_of`, `now`: as for search_turns)."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.search_sessions(namespace, query, k, recipe, instant(as_of), instant(now))

    @server.tool()
    async def search_memories(namespace: str, query: QueryText, ctx: Context, k: K = 10,
                              as_of: Timestamp | None = None, now: Timestamp | None = None) -> list[MemoryHit]:
        """Facts and turns about `query` ("what did we decide about X?"), one score each."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.search_memories(namespace, query, k, instant(as_of), instant(now))

    @server.tool()
    async def recall(namespace: str, query: QueryText, ctx: Context, k: K = 10,
                     as_of: Timestamp | None = None, now: Timestamp | None = None) -> list[MemoryHit]:
        """Turns, facts and summaries relevant to `query`, ranked by one score (similarity, closeness
        to the entities it names, fact confidence); superseded facts left out. `as_of`: as at that
        moment; `now`: when the question is asked."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.recall(namespace, query, k, instant(as_of), instant(now))

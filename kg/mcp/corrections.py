"""MCP tools for corrections and the rules they graduate to: the standing rules (`core_rules`),
add a correction, confirm one as a rule."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kg.core.models.corrections import CoreRules, CorrectionResult, CorrectionType, CorrectionView
from kg.core.models.limits import Timestamp
from kg.core.models.turns import instant
from kg.core.vocabulary import Trust
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def core_rules(namespace: str, ctx: Context) -> CoreRules:
        """The user's standing rules and strong preferences (from past corrections), strongest first."""
        return await (await door.open(ctx, namespace, existing=True)).core_rules(namespace)

    @server.tool()
    async def add_correction(
        namespace: str, session_id: Annotated[str, Field(min_length=1, max_length=200)],
        rule_text: Annotated[str, Field(min_length=1, max_length=4000)], ctx: Context,
        original_behavior: Annotated[str | None, Field(max_length=4000)] = None,
        corrected_behavior: Annotated[str | None, Field(max_length=4000)] = None,
        correction_type: CorrectionType = "preference", seen_at: Timestamp | None = None,
        evidence_turn_ids: Annotated[list[str], Field(max_length=1000)] = [],  # noqa: B006 - pydantic copies it
        confidence: Annotated[float | None, Field(gt=0, le=1)] = None, trust: Trust | None = None,
    ) -> CorrectionResult:
        """Record that the user corrected the agent in `session_id` ("use uv, not pip"); it is added,
        reinforces a similar one, or invalidates a contradicted one, and graduates towards a rule.
        `trust` "untrusted" (from a tool, a page, another agent): it never does any of that to a
        trusted one, nor becomes a rule, until `confirm`."""
        memory = await door.open(ctx, namespace)
        try:
            return await memory.add_correction(namespace, session_id, rule_text, original_behavior,
                                               corrected_behavior, correction_type, instant(seen_at),
                                               evidence_turn_ids, confidence, door.trust(ctx, trust))
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def confirm_rule(namespace: str, correction_id: str, ctx: Context) -> CorrectionView:
        """The user explicitly confirmed a correction: it becomes a rule."""
        memory = await door.open(ctx, namespace, existing=True)
        try:
            return await memory.confirm_rule(namespace, correction_id)
        except KeyError as exc:
            raise ToolError(exc.args[0]) from None

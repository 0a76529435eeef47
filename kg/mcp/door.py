"""What every MCP tool does before it touches the memory (`Door`), and who may call it (`Scope`):
shared by the tool modules (`kg.mcp.search`, `.sessions`, `.facts`, ...), whose `register(server,
door)` `kg.mcp.server` calls."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol, Sequence

from kg.core.extras import require

require("server", "mcp", "starlette")

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from kg.access import LOCAL, OPEN, AccessDenied, Grant, Keyring, key_digest, writer_trust
from kg.core.models.turns import check_namespace
from kg.core.vocabulary import Trust

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kg.memory import AsyncMemory


class Scope(Protocol):
    """Which namespaces the caller of a tool may use, and the memory to use them with."""

    def grant(self, ctx: Context) -> Grant: ...

    async def memory(self) -> AsyncMemory: ...

    def by(self, ctx: Context) -> str:
        """Who is calling, for erasure records: a key's digest prefix, or "local"."""
        ...

    def key_trust(self, ctx: Context) -> Trust:
        """What the caller's writes are: "untrusted" for a key of `[http] untrusted_keys`."""
        ...


@dataclass
class LocalScope:
    """stdio: the namespaces given on the command line (empty: all), and the memory: `opened`, or
    what `opener` opens on the first tool call that needs it (`kg mcp` starts opening it as soon as
    the server runs, so `initialize` is answered before the facade is even imported). An open that
    failed (the database is down) is tried again by the next call."""

    namespaces: Sequence[str] = ()
    opened: AsyncMemory | None = None
    opener: Callable[[], Awaitable[AsyncMemory]] | None = None
    _opening: asyncio.Task[AsyncMemory] | None = field(default=None, repr=False)

    def grant(self, ctx: Context) -> Grant:
        return Grant(frozenset(self.namespaces)) if self.namespaces else OPEN

    def start(self) -> None:
        """Begin opening the memory in the background (no-op when it is open or opening)."""
        if self.opened is None and self.opener is not None and self._opening is None:
            self._opening = asyncio.ensure_future(self.opener())

    async def close(self) -> None:
        """At shutdown: an open still under way is cancelled (a failed one's error is consumed here,
        not reported as never retrieved); the memory is closed, also one opened in the background
        that no tool call ever took."""
        opening, self._opening = self._opening, None
        if opening is not None:
            if not opening.done():
                opening.cancel()
            with contextlib.suppress(BaseException):
                self.opened = self.opened or await opening
        if self.opened is not None:
            await self.opened.close()

    async def memory(self) -> AsyncMemory:
        if self.opened is not None:
            return self.opened
        assert self.opener is not None, "the MCP server is not running"
        self.start()
        assert self._opening is not None
        opening = self._opening
        try:
            self.opened = await asyncio.shield(opening)
        except BaseException:
            if opening.done() and self._opening is opening:
                self._opening = None  # the next call tries again
            raise
        return self.opened

    def by(self, ctx: Context) -> str:
        return LOCAL

    def key_trust(self, ctx: Context) -> Trust:
        return "trusted"


@dataclass
class HttpScope:
    """Streamable HTTP inside the API app: the request's X-API-Key, the app's memory."""

    app: "FastAPI"

    def grant(self, ctx: Context) -> Grant:
        keyring: Keyring = self.app.state.keyring
        return keyring.grant((ctx.headers or {}).get("x-api-key"))

    async def memory(self) -> AsyncMemory:
        memory: AsyncMemory = self.app.state.memory
        return memory

    def by(self, ctx: Context) -> str:
        key = (ctx.headers or {}).get("x-api-key")
        return key_digest(key)[:19] if key and self.app.state.keyring.enabled else LOCAL

    def key_trust(self, ctx: Context) -> Trust:
        keyring: Keyring = self.app.state.keyring
        return keyring.trust((ctx.headers or {}).get("x-api-key")) if keyring.enabled else "trusted"


class Door:
    """What every tool does before it touches the memory: the namespace is valid (the rule REST
    applies), the caller may use it, and for reads it holds something. Errors are `ToolError`s."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    async def check(self, ctx: Context, namespace: str) -> AsyncMemory:
        """The memory, once the namespace is valid and the caller may use it (writes)."""
        try:
            check_namespace(namespace)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        try:
            self.scope.grant(ctx).check(namespace)
        except AccessDenied as exc:
            message = exc.message if isinstance(self.scope, HttpScope) else (
                f"this server may not use namespace {namespace!r}: it was started with `kg mcp -n` for others")
            raise ToolError(message) from None
        return await self.scope.memory()

    async def open(self, ctx: Context, namespace: str, existing: bool = False) -> AsyncMemory:
        """`check`, and for reads (`existing`) a namespace that holds something."""
        memory = await self.check(ctx, namespace)
        if existing:
            rows = await memory.store.read("namespaces/exists", namespace=namespace)
            if not rows[0]["exists"]:
                raise ToolError(f"namespace {namespace!r} holds no data")
        return memory

    def by(self, ctx: Context) -> str:
        return self.scope.by(ctx)

    def trust(self, ctx: Context, asked: Trust | None) -> Trust:
        """The trust a tool's write is stored with: `asked` (None: the tool was not told), unless the
        caller's key writes untrusted content only (then asking for "trusted" is a tool error)."""
        try:
            return writer_trust(asked, self.scope.key_trust(ctx))
        except AccessDenied as exc:
            raise ToolError(exc.message) from None


"""What the API's ASGI middlewares share: they see HTTP requests only, and some watch the status."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HttpMiddleware:
    """An ASGI middleware for HTTP requests (`handle`); lifespan and other scopes pass through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class StatusWatch:
    """`send`, keeping the answer's status: 500, what the client sees, until the app answers."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.status = 500
        self.answered = False  # the response has started: too late to answer anything else

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status, self.answered = message["status"], True
        await self.send(message)

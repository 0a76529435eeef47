"""The remote client's exceptions (`kg.client`): one per kind of HTTP error, each also a built-in
exception a caller may already catch (`InvalidRequest` is a `ValueError`, `NotFound` a `KeyError`...)."""

from __future__ import annotations

from typing import Any

import httpx


class ClientError(Exception):
    """An HTTP error answer: `status`, the API's `error` code, `message` and `detail` list."""

    def __init__(self, status: int, error: str, message: str, detail: list[dict[str, Any]] | None = None) -> None:
        super().__init__(f"{status} {error}: {message}")
        self.status, self.error, self.message, self.detail = status, error, message, detail or []

    @property
    def field(self) -> str | None:
        return self.detail[0].get("field") if self.detail else None


class InvalidRequest(ClientError, ValueError):
    """422, 400 or 413: the API refused an argument (`.field` names it)."""


class NotFound(ClientError, KeyError):
    """404: the namespace holds nothing, or the job or item is unknown."""

    def __str__(self) -> str:  # KeyError would repr the message
        return Exception.__str__(self)


class AccessDenied(ClientError, PermissionError):
    """401 or 403: no key, or a key that may not use the namespace."""


class Unavailable(ClientError, ConnectionError):
    """503, or no answer at all: the server is away or refused for longer than the client waits."""


class ServerError(ClientError, RuntimeError):
    """Any other 5xx answer."""


def error_of(response: httpx.Response) -> ClientError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    status = response.status_code
    kind = {400: InvalidRequest, 413: InvalidRequest, 422: InvalidRequest, 404: NotFound, 401: AccessDenied,
            403: AccessDenied, 503: Unavailable}.get(status, ServerError if status >= 500 else ClientError)
    return kind(status, body.get("error", "error"), body.get("message", response.text[:200]), body.get("detail"))

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
    pass


class NotFound(ClientError, KeyError):
    def __str__(self) -> str:  # KeyError would repr the message
        return Exception.__str__(self)


class AccessDenied(ClientError, PermissionError):
    pass


class Unavailable(ClientError, ConnectionError):
    pass


class ServerError(ClientError, RuntimeError):
    pass


def error_of(response: httpx.Response) -> ClientError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    status = response.status_code
    kind = {400: InvalidRequest, 413: InvalidRequest, 422: InvalidRequest, 404: NotFound, 401: AccessDenied,
            403: AccessDenied, 503: Unavailable}.get(status, ServerError if status >= 500 else ClientError)
    return kind(status, body.get("error", "error"), body.get("message", response.text[:200]), body.get("detail"))

"""What every route module of the HTTP API shares: the version, the namespace scope every memory
route depends on (`Namespace`, `Existing`), the open memory (`Mem`), the namespace routers' prefix, the error body."""

from __future__ import annotations

from typing import Annotated, Any, Sequence

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Security
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader

from kg.access import writer_trust
from kg.core.models.requests import Instant
from kg.core.models.turns import NAMESPACE_RULE, valid_namespace
from kg.core.vocabulary import Trust
from kg.memory import AsyncMemory

API_VERSION = "1"

api_key = APIKeyHeader(name="X-API-Key", auto_error=False,
                       description="Required when `[http] keys` is configured; scopes the caller to namespaces.")
SCOPE = "/v1/namespaces/{namespace}"


def namespace_router() -> APIRouter:
    """A route module's router for the routes under `/v1/namespaces/{namespace}`; `kg.http.app`
    includes each module's router in the app it builds."""
    return APIRouter(prefix=SCOPE)


# -- scope ------------------------------------------------------------------------------------
async def scoped_namespace(request: Request, namespace: str, key: str | None = Security(api_key)) -> str:
    """The path's namespace, once the caller's key may use it (401/403 before anything else)."""
    request.app.state.keyring.grant(key).check(namespace)
    if not valid_namespace(namespace):
        raise HTTPException(422, [{"field": "namespace", "message": NAMESPACE_RULE}])
    return namespace


async def existing_namespace(request: Request, namespace: str = Depends(scoped_namespace)) -> str:
    """For reads: 404 when the namespace holds nothing, rather than an empty answer to a typo."""
    known: set[str] = request.app.state.known_namespaces
    if namespace not in known:
        rows = await memory_of(request).store.read("namespaces/exists", namespace=namespace)
        if not rows[0]["exists"]:
            raise HTTPException(404, [{"field": "namespace", "message": f"namespace {namespace!r} holds no data"}])
        known.add(namespace)
    return namespace


def memory_of(request: Request) -> AsyncMemory:
    return request.app.state.memory


async def key_trust(request: Request, key: str | None = Security(api_key)) -> Trust:
    """What the caller's key writes: "untrusted" for a key of `[http] untrusted_keys`."""
    keyring = request.app.state.keyring
    return keyring.trust(key) if keyring.enabled else "trusted"


def trust_of(body: Any, key: Trust) -> Trust:
    """The trust a body's write is stored with (403 when an untrusted key asks for "trusted")."""
    return writer_trust(body.trust if "trust" in body.model_fields_set else None, key)


Namespace = Annotated[str, Depends(scoped_namespace)]
KeyTrust = Annotated[Trust, Depends(key_trust)]
Existing = Annotated[str, Depends(existing_namespace)]
Mem = Annotated[AsyncMemory, Depends(memory_of)]
InstantQuery = Annotated[Instant | None, Query(description="ISO 8601; without an offset: UTC.")]


def error_response(status: int, error: str, message: str, detail: Sequence[dict[str, Any]] = ()) -> JSONResponse:
    return JSONResponse({"error": error, "message": message, "detail": list(detail)}, status_code=status)

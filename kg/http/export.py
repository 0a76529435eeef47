"""HTTP route for export: `GET /v1/namespaces/{ns}/export` streams the namespace (or one subject,
for a data-access request) as NDJSON, the format of docs/export.md. 404: no such subject."""

from __future__ import annotations

from typing import Any, AsyncIterator

from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse

from kg.core.models.export import dumps
from kg.http.common import Existing, Mem, namespace_router

router = namespace_router()

RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/x-ndjson": {}}, "description": "One JSON record a line (docs/export.md)."},
    404: {"description": "No such namespace or subject."},
}


@router.get("/export", response_class=StreamingResponse, responses=RESPONSES, tags=["forget"])
async def export_namespace(namespace: Existing, memory: Mem, subject: str | None = None,
                           vectors: bool = False) -> StreamingResponse:
    """Export the namespace, or everything held about `subject`; `vectors` adds the embeddings."""
    records = memory.export_namespace(namespace, subject, vectors)
    try:  # the first record is read here so that an unknown subject is a 404, not a cut stream
        first = await records.__anext__()
    except KeyError as exc:
        raise HTTPException(404, [{"field": "subject", "message": exc.args[0]}]) from None

    async def lines() -> AsyncIterator[str]:
        yield dumps(first) + "\n"
        async for record in records:
            yield dumps(record) + "\n"

    return StreamingResponse(lines(), media_type="application/x-ndjson")


def register(app: FastAPI) -> None:
    app.include_router(router)

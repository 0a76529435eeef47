"""HTTP route for a user's existing history (docs/import.md): `POST /v1/namespaces/{ns}/import/{format}`
with the file itself as the body: a Claude Code session transcript (JSON Lines), ChatGPT's
`conversations.json`, or an OpenAI or Anthropic message list. The answer is the ingest report: 200,
or 207 when some lines or conversations were rejected (each with body:line and why) and the rest
stored. Importing the same file again writes nothing new."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request, Response

from kg.core.models.limits import SessionId
from kg.core.models.turns import IngestReport
from kg.http.common import InstantQuery, Mem, Namespace, namespace_router

router = namespace_router()
HistoryFormat = Literal["claude-code", "chatgpt", "openai", "anthropic"]
BODY: dict[str, Any] = {"requestBody": {"required": True, "description": "The file, as it is.", "content": {
    "application/json": {}, "application/x-ndjson": {}, "application/octet-stream": {}}}}


@router.post("/import/{format}", response_model=IngestReport, tags=["ingest"], openapi_extra=BODY, responses={
    207: {"model": IngestReport, "description": "Some lines or conversations rejected; the rest were stored."},
    413: {"description": "Body larger than `[http] max_body_bytes`."},
    422: {"description": "An empty body, or a parameter refused."}})
async def import_history(request: Request, response: Response, namespace: Namespace, format: HistoryFormat,
                         memory: Mem, tools: bool = True,
                         session_id: SessionId | None = Query(None, description="Of a session (a conversation) that "
                                                              "names none; required for message lists."),
                         start: InstantQuery = None) -> IngestReport:
    """Import a transcript or an export; `tools`: tool calls and their results as attachments (false:
    left out); `start`: when a message list without times began."""
    body = await request.body()
    if not body.strip():
        raise HTTPException(422, [{"field": "body", "message": "empty: send the file as the request body"}])
    try:
        if format == "claude-code":
            report = await memory.import_claude_code(namespace, body, tools, session_id)
        elif format == "chatgpt":
            report = await memory.import_chatgpt(namespace, body, tools)
        else:
            report = await memory.import_messages(namespace, body, format, session_id, start, tools)
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        raise HTTPException(422, [{"field": field if message else "body", "message": message or field}]) from None
    if report.written or report.existing:
        request.app.state.known_namespaces.add(namespace)
    response.status_code = 207 if report.rejected else 200
    return report


def register(app: FastAPI) -> None:
    app.include_router(router)

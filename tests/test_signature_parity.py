"""Every door speaks `AsyncMemory`'s parameters: `Memory` has its signatures (twins), the remote
`AsyncClient` / `Client` the same names, kinds, defaults and annotations where they offer a method,
HTTP's query parameters and request bodies the same field names and types, MCP's tools the same
parameter names. Pure: no database. A difference is either listed below with its reason or a failure,
and every list is exact, so it cannot grow (or go stale) in silence."""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from datetime import datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from kg.client import AsyncClient, Client
from kg.core.settings.tree import Settings
from kg.memory import AsyncMemory, Memory
from kg.synchronous import Synchronous

# The engine's services that the facade inherits: what the write path and the jobs are given, not operations.
ENGINE_SERVICES = {"open_indexer", "open_summarizer", "vector_sink"}

# What the remote client does not offer, and why.
CLIENT_LACKS = {
    "start": "the server opens its own memory (`kg serve`)",
    "warm": "the server loads its own embedder",
    "delete_namespace": "irreversible and leaves no record (tests, benchmarks); over HTTP a namespace is erased",
    "erasures": "no HTTP route lists erasure records",
    "export_namespace": "a stream of NDJSON (GET .../export); the client does not wrap it",
    "import_records": "no HTTP route: `kg import ndjson` runs where the database is",
    "import_claude_code": "reads the caller's files; HTTP takes the file as a body (POST .../import/claude-code)",
    "import_chatgpt": "reads the caller's files; HTTP takes the file as a body (POST .../import/chatgpt)",
    "import_messages": "reads the caller's files; HTTP takes the file as a body (POST .../import/{openai,anthropic})",
    "index_session": "the server's workers index (enqueue_job extract_session)",
    "index_pending": "the server's workers index (their schedules sweep)",
    "summarize_due": "the server's workers summarize (their schedules sweep)",
    "run_jobs": "jobs run in the server's workers, not in the caller",
    "correction_clusters": "no HTTP route; the clusters are the nightly job's",
    "maintain_corrections": "a job of the server's workers (enqueue_job maintain_corrections)",
}

# (method, parameter): where the client's parameter deliberately differs (or is absent on one side).
CLIENT_DIFFERS = {
    **{(m, "by"): "the server records who erased or changed: the API key's digest"
       for m in ("erase_session", "erase_turn", "erase_subject", "erase_namespace", "revert", "confirm")},
    **{(m, "recipe"): "over HTTP a recipe is given by name, never as a `Recipe` object"
       for m in ("search_turns", "retrieve", "search_sessions")},
    **{(m, "namespace"): "the HTTP API scopes jobs by namespace; the client remembers the jobs it saw"
       for m in ("job", "retry_job")},
    ("open", "warm"): "nothing to open or warm: the server did",
}


def _public(cls: type) -> set[str]:
    return {name for name, value in inspect.getmembers(cls) if not name.startswith("_") and callable(value)}


FACADE = sorted(_public(AsyncMemory) - ENGINE_SERVICES)


def _params(func: Any) -> dict[str, tuple[Any, Any, Any]]:
    """name -> (kind, default, resolved annotation), without `self`."""
    hints = typing.get_type_hints(func, include_extras=True)
    return {p.name: (p.kind, p.default, hints.get(p.name)) for p in inspect.signature(func).parameters.values()
            if p.name != "self"}


# -- Python: Memory, AsyncClient, Client -----------------------------------------------------------
def test_memory_is_the_twin_of_every_facade_method() -> None:
    assert sorted(_public(Memory) & set(FACADE)) == FACADE
    assert Memory.close is Client.close is Synchronous.close  # closes the async twin, then its loop
    for name in set(FACADE) - {"close"}:
        twin, method = getattr(Memory, name), getattr(AsyncMemory, name)
        assert getattr(twin, "__wrapped__", None) is method, f"Memory.{name} is not twin(AsyncMemory.{name})"
        assert inspect.signature(twin) == inspect.signature(method), name


def test_the_client_lacks_only_what_is_listed() -> None:
    assert sorted(set(FACADE) - _public(AsyncClient)) == sorted(CLIENT_LACKS)
    assert sorted(_public(AsyncClient) - set(FACADE)) == []
    for name in _public(AsyncClient) - {"close"}:
        assert getattr(getattr(Client, name), "__wrapped__", None) is getattr(AsyncClient, name), name


def client_differences() -> dict[tuple[str, str], str]:
    found = {}
    for name in sorted(set(FACADE) & _public(AsyncClient)):
        ours, theirs = _params(getattr(AsyncMemory, name)), _params(getattr(AsyncClient, name))
        if list(ours) != list(theirs):  # the order matters too: positional calls
            found.update({(name, p): "absent" for p in set(ours) ^ set(theirs)})
            if [p for p in ours if p in theirs] != [p for p in theirs if p in ours]:
                found[(name, "<order>")] = "order"
        for param in set(ours) & set(theirs):
            if ours[param] != theirs[param]:
                found[(name, param)] = f"{ours[param]} != {theirs[param]}"
    return found


def test_the_client_has_the_facade_signatures() -> None:
    found = client_differences()
    assert {k: v for k, v in found.items() if k not in CLIENT_DIFFERS} == {}
    assert sorted(set(CLIENT_DIFFERS) - set(found)) == []  # a listed difference that went away: unlist it


# -- types, as a door can carry them --------------------------------------------------------------
def shape(tp: Any) -> Any:
    """A type as a door carries it: without constraints (Annotated), `None` apart, any sequence a list."""
    origin = get_origin(tp)
    if origin is Annotated:
        return shape(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        members = frozenset(shape(a) for a in get_args(tp))
        return next(iter(members)) if len(members) == 1 else members
    if origin is Literal:
        return ("literal", frozenset(get_args(tp)))
    if origin in (list, tuple, collections.abc.Sequence, collections.abc.Iterable, collections.abc.Iterator):
        return ("list", shape(get_args(tp)[0]) if get_args(tp) else Any)
    if origin in (dict, collections.abc.Mapping):
        return "mapping"
    if isinstance(tp, type) and issubclass(tp, datetime):
        return datetime
    return tp


def _facade_shape(method: str, param: str) -> Any:
    return shape(_params(getattr(AsyncMemory, method))[param][2])


# -- HTTP --------------------------------------------------------------------------------------------
SCOPE = "/v1/namespaces/{namespace}"
# (HTTP method, path under the namespace) -> the facade method it runs
HTTP = {
    ("POST", "/messages"): "add_message", ("POST", "/sessions"): "add_turns",
    ("GET", "/sessions"): "sessions", ("GET", "/sessions/{session_id}"): "turns",
    ("POST", "/sessions/{session_id}/close"): "close_session",
    ("GET", "/sessions/{session_id}/summaries"): "summaries",
    ("GET", "/search"): "search_turns", ("GET", "/search/sessions"): "search_sessions",
    ("GET", "/search/memories"): "search_memories", ("GET", "/recall"): "recall",
    ("GET", "/facts"): "facts", ("GET", "/facts/history"): "history", ("POST", "/facts"): "remember",
    ("POST", "/corrections"): "add_correction", ("GET", "/corrections"): "corrections",
    ("POST", "/corrections/{correction_id}/confirm"): "confirm_rule", ("GET", "/rules"): "core_rules",
    ("GET", "/relationships"): "relationships", ("POST", "/relationships"): "relate",
    ("DELETE", "/sessions/{session_id}"): "erase_session", ("DELETE", "/turns/{turn_id}"): "erase_turn",
    ("DELETE", "/subjects/{subject}"): "erase_subject", ("DELETE", ""): "erase_namespace",
    ("GET", "/facts/{fact_id}/why"): "explain", ("GET", "/relationships/{edge_id}/why"): "explain",
    ("GET", "/changes"): "changes", ("POST", "/changes/{id}/revert"): "revert",
    ("POST", "/changes/{id}/confirm"): "confirm", ("GET", "/export"): "export_namespace",
    ("POST", "/import/{format}"): "import_messages",
    ("POST", "/jobs"): "enqueue_job", ("GET", "/jobs"): "jobs", ("GET", "/jobs/{job_id}"): "job",
    ("POST", "/jobs/{job_id}/retry"): "retry_job",
}
# HTTP's own names for a facade parameter, and why.
HTTP_NAMES = {
    "q": ("query", "the documented query parameter of every search"),
    "strategy": ("recipe", "the documented query parameter that names a recipe"),
    "fact_id": ("id", "the path names which kind of id it takes"),
    "edge_id": ("id", "the path names which kind of id it takes"),
    ("revert", "id"): ("event_id", "one path, /changes/{id}/..., for revert and confirm"),
}
# (method, HTTP field): a deliberate difference of type or presence, and why.
HTTP_DIFFERS = {
    ("search_turns", "strategy"): "a recipe by name (RecipeChoice); the facade also takes a Recipe object",
    ("search_sessions", "strategy"): "a recipe by name (RecipeChoice); the facade also takes a Recipe object",
    ("import_messages", "format"): "one route for the four formats: claude-code and chatgpt have methods of their own",
    ("jobs", "status"): "a JobStatus over HTTP; the facade passes any string to the queue",
    ("add_message", "role"): "a Role over HTTP; the facade takes a str (Message refuses another role), so callers "
                             "holding a str need no cast",
    ("add_message", "attachments"): "JSON objects as Attachments; the facade also takes plain mappings",
    ("add_turns", "turns"): "items validated one by one as MessageIn; the facade takes mappings or Messages",
    ("enqueue_job", "params"): "an object, {} by default; the facade's None means {}",
    ("add_message", "external_id"): "a batch item carries a Message's fields; add_message takes the common ones",
    ("add_message", "verbatim"): "a batch item carries a Message's fields; add_message takes the common ones",
}


def _http_fields() -> dict[tuple[str, str], dict[str, Any]]:
    """(HTTP method, path) -> {field: type} of the route's own query and path parameters and body fields
    (a batch's item model for the batch routes); the namespace and the caller's key are the scope's."""
    from fastapi.routing import APIRoute

    from kg.batch import MessageIn
    from kg.http import create_app

    def walk(routes: list[Any]) -> Any:  # an included router is a route of its own in newer FastAPI
        for route in routes:
            yield from walk(route.original_router.routes) if hasattr(route, "original_router") else [route]

    out = {}
    for route in walk(create_app(Settings()).routes):
        if not isinstance(route, APIRoute) or not route.path.startswith(SCOPE):
            continue
        fields: dict[str, Any] = {}
        dependant = route.dependant
        for param in (*dependant.query_params, *dependant.path_params):
            fields[param.name] = param.field_info.annotation
        for param in dependant.body_params:
            model = param.field_info.annotation
            if route.path.endswith("/messages"):  # a batch of add_message's items
                model = MessageIn
            assert isinstance(model, type) and issubclass(model, BaseModel)
            fields.update({name: f.annotation for name, f in model.model_fields.items()})
        for method in route.methods:
            out[(method, route.path.removeprefix(SCOPE))] = fields
    return out


def http_differences() -> dict[tuple[str, str], str]:
    found = {}
    routes = _http_fields()
    assert sorted(routes) == sorted(HTTP), "a route was added or removed: map it to its facade method in HTTP"
    for (verb, path), fields in routes.items():
        method = HTTP[(verb, path)]
        ours = _params(getattr(AsyncMemory, method))
        for field, tp in fields.items():
            if field == "session_id" and path == "/messages":
                continue  # refused there: each item names its session
            name = HTTP_NAMES.get((method, field), HTTP_NAMES.get(field, (field, "")))[0]
            if name not in ours:
                found[(method, field)] = "not a parameter of the facade method"
            elif shape(tp) != shape(ours[name][2]):
                found[(method, field)] = f"{shape(tp)} != {shape(ours[name][2])}"
    return found


def test_http_carries_the_facade_parameters() -> None:
    found = http_differences()
    assert {k: v for k, v in found.items() if k not in HTTP_DIFFERS} == {}
    assert sorted(set(HTTP_DIFFERS) - set(found)) == []


# -- MCP ---------------------------------------------------------------------------------------------
# tool -> the facade method it runs
MCP = {
    "search_turns": "search_turns", "search_sessions": "search_sessions", "search_memories": "search_memories",
    "recall": "recall", "remember": "remember", "facts_as_of": "facts", "fact_history": "history",
    "core_rules": "core_rules", "add_correction": "add_correction", "confirm_rule": "confirm_rule",
    "forget": "erase_session", "why": "explain", "changes": "changes", "revert": "revert", "confirm": "confirm",
    "add_messages": "ingest", "add_turns": "add_turns", "list_sessions": "sessions", "get_session": "turns",
    "close_session": "close_session", "get_summaries": "summaries", "relationships_as_of": "relationships",
    "relate": "relate",
}
# (tool, parameter): a name the facade method does not have, and why.
MCP_DIFFERS = {
    ("forget", "scope"): "one tool for the four erase methods: `scope` picks erase_session, _turn, _subject or _namespace",
    ("forget", "target"): "one tool for the four erase methods: what each calls session_id, turn_id, subject",
    ("add_messages", "namespace"): "ingest takes Messages that carry their namespace; the tool takes it once",
}


async def mcp_differences() -> dict[tuple[str, str], str]:
    from kg.mcp.server import LocalScope, build_server

    tools = {t.name: t for t in await build_server(LocalScope()).list_tools()}
    assert sorted(tools) == sorted(MCP), "a tool was added or removed: map it to its facade method in MCP"
    found = {}
    for name, tool in tools.items():
        ours = _params(getattr(AsyncMemory, MCP[name]))
        for param in tool.input_schema["properties"]:
            if param not in ours:
                found[(name, param)] = "not a parameter of the facade method"
    return found


async def test_mcp_tools_carry_the_facade_parameter_names() -> None:
    found = await mcp_differences()
    assert {k: v for k, v in found.items() if k not in MCP_DIFFERS} == {}
    assert sorted(set(MCP_DIFFERS) - set(found)) == []


# -- the checks see a mismatch ----------------------------------------------------------------------
def test_a_renamed_parameter_is_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    async def facts(self: Any, namespace: str, subject: str, predicate: str | None = None,
                    as_at: datetime | None = None, known_at: datetime | None = None,
                    include_superseded: bool = False) -> list[Any]:
        return []

    monkeypatch.setattr(AsyncMemory, "facts", facts)
    assert ("facts", "as_of") in client_differences()
    assert ("facts", "as_of") in http_differences()


def test_a_type_that_drifts_is_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    async def history(self: Any, namespace: str, subject: str, predicate: str | None = None,
                      known_at: str | None = None, include_expired: bool = False) -> list[Any]:
        return []

    monkeypatch.setattr(AsyncMemory, "history", history)
    assert ("history", "known_at") in http_differences()
    assert shape(Annotated[list[str], "x"]) == shape(collections.abc.Iterable[str])

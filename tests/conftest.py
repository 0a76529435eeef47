"""Database tests run against the real local Neo4j (started on demand by AsyncMemory); each test gets
its own namespace, deleted afterwards. They carry the `neo4j` marker, so `pytest -m "not neo4j"` runs
the pure tests alone, in seconds and with no server: a test is marked when it uses a fixture of
`DATABASE_FIXTURES` (directly or through another fixture), or by hand in its module when it opens a
memory or a server itself.

`KG_TEST_URI_SCHEME=neo4j` runs them through a routing URI instead of a direct Bolt one: the local
server is started first and every `Settings` of the run gets `neo4j://127.0.0.1:<bolt port>` and its
password through the environment, so the driver fetches a routing table, sends reads and writes by
access mode and chains bookmarks, as against a cluster.

`make test` runs the suite in two pytest-xdist workers, a module per worker at a time (`--dist
loadfile`: a module's fixtures are built once). The first worker uses the managed server `make test`
started; every other worker starts a managed server of its own, in a home of the run's own (a
temporary folder, free ports: two runs at once never share it), started when collection ends, stopped
and removed when the worker ends. So no test sees another worker's writes: a test may count every node
of the database.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest

from kg import AsyncMemory, Memory, Settings, load_settings
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.store.store import resolve_connection
from tests.ports import free_port

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
URI_SCHEMES = ("bolt", "neo4j")
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # pytest-xdist's name of this process; gw0 alone


# fixtures that open the database; a test whose fixture closure holds one of them gets `neo4j`
DATABASE_FIXTURES = frozenset({
    "memory",  # and everything built on it: namespace, api, the HTTP/MCP/browser fixtures
    "configured",  # test_facts: a second client
    "cut_off",  # test_fail_fast: a memory behind a relay to the server
    "llm_memory", "spare",  # test_faults: a memory with a fake LLM; a spare managed server
    "offline_memory",  # test_indexing, test_jobs: a memory with the offline extractor
    "sync_memory",  # the sync facade: the framework doors, test_langgraph_store
})


# a worker past the first runs a managed server of its own (a URI given by the environment is everyone's)
OWN_SERVER = WORKER != "gw0" and not os.environ.get("KG_NEO4J__URI")


def pytest_configure(config: pytest.Config) -> None:
    scheme = os.environ.get("KG_TEST_URI_SCHEME", "bolt")
    if scheme not in URI_SCHEMES:
        raise pytest.UsageError(f"KG_TEST_URI_SCHEME must be one of {URI_SCHEMES}, got {scheme!r}")
    if OWN_SERVER:
        os.environ["KG_NEO4J__LOCAL__DATA_DIR"] = tempfile.mkdtemp(prefix=f"kg-test-{WORKER}-")  # private (0700)
        os.environ["KG_NEO4J__LOCAL__BOLT_PORT"] = str(free_port())
        os.environ["KG_NEO4J__LOCAL__HTTP_PORT"] = str(free_port())
        load_settings.cache_clear()


# the modules of a minute or more (spare servers, dozens of `kg` processes) run first: with two
# workers the run then ends on short modules instead of on one worker's long one
SLOW_FIRST = ("test_faults.py", "test_schema.py", "test_export_search.py", "test_embedding_fallback_db.py",
              "test_doors_agree.py", "test_local_server.py", "test_lg_postgres_async_store.py",
              "test_local_secrets.py", "test_coding_agent_hooks.py", "test_neo4j_jars.py")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)
    rank = {name: n for n, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))  # stable: a module stays whole


def pytest_collection_finish(session: pytest.Session) -> None:
    """With the routing scheme, start the server now, before any test builds its settings; only when
    a selected test needs it (`-m "not neo4j"` starts nothing). The test modules' imports are
    frozen out of the collector's sight first (`pytest_runtest_teardown`)."""
    gc.collect()
    gc.freeze()
    needed = any(item.get_closest_marker("neo4j") for item in session.items)
    if not needed or session.config.option.collectonly:
        return
    if OWN_SERVER:
        resolve_connection(Settings())  # this worker's own server, started now (its ports were free a moment ago)
    if os.environ.get("KG_TEST_URI_SCHEME", "bolt") == "neo4j" and not os.environ.get("KG_NEO4J__URI"):
        conn = resolve_connection(Settings())  # the managed server, started now
        os.environ["KG_NEO4J__URI"] = conn.uri.replace("bolt://", "neo4j://", 1)
        if conn.password is not None:
            os.environ["KG_NEO4J__PASSWORD"] = conn.password
        load_settings.cache_clear()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if OWN_SERVER:
        LocalNeo4j(load_settings().neo4j.local).stop(echo=lambda _: None)
        shutil.rmtree(os.environ["KG_NEO4J__LOCAL__DATA_DIR"], ignore_errors=True)


@pytest.hookimpl(trylast=True)  # after pytest's own teardown: the module's fixtures are gone by then
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After each module, what is still alive (the modules it imported, the session's memory and its
    model) is frozen out of the collector's sight, as `kg.core.heap.calm_collector` does in a
    service's process. A full collection walks every tracked object and holds the event loop, and
    the driver takes a request's acquisition deadline ([neo4j] connection_acquisition_timeout_s,
    1.5 s) then checks it with no await between: a full collection in between fails the request
    with ConnectionAcquisitionTimeoutError although the pool has free connections. Without this,
    one took 0.8 s on a loaded 2-core machine three test files into a run, 1.35 s on a heap the
    size of a late one."""
    if nextitem is None or nextitem.module is not item.module:
        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True)
def _process_settings_untouched() -> Iterator[None]:
    """A test leaves the process-wide settings (`load_settings()`, read once) as it found them: the
    session's `memory` holds them, so a change in place changes every later test. test_rerank once
    set the cross-encoder on them, and every hierarchical search after it in the suite was reranked
    (tests/test_retrieval_closing.py's ranks moved with the suite's order). Change a copy
    (`load_settings().model_copy(deep=True)`)."""
    before = load_settings().model_dump()
    yield
    after = load_settings().model_dump()
    changed = sorted(_changed(before, after))
    assert not changed, f"the test changed the process-wide settings in place: {changed}"


def _changed(before: object, after: object, path: str = "") -> Iterator[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before.keys() | after.keys():
            yield from _changed(before.get(key), after.get(key), f"{path}.{key}" if path else str(key))
    elif before != after:
        yield path


@pytest.fixture(scope="session")
async def memory() -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(load_settings()) as mem:
        yield mem


@pytest.fixture
async def namespace(memory: AsyncMemory) -> AsyncIterator[str]:
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    await memory.delete_namespace(ns)


@pytest.fixture(scope="module")
def sync_memory() -> Iterator[Memory]:
    """The synchronous facade, for the doors that call it (the framework doors, LangGraph's store)."""
    with Memory(load_settings()) as memory:
        yield memory


@pytest.fixture
def sync_ns(sync_memory: Memory) -> Iterator[str]:
    """A namespace of the test's own, deleted afterwards through the synchronous facade."""
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    sync_memory.delete_namespace(ns)


def shared_data(name: str) -> Path:
    """A file of ../shared/data, or a skip saying why the test cannot run."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development data is not beside this checkout")
    return path

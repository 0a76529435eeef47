"""The Neo4j store: the one place that talks to the driver.

Statements come from `cypher/` by name; values are always parameters. Each is timed, and traced
when tracing is on, under its name (`kg.core.telemetry.hooks.statement`). Labels and relationship
types only ever come from those files. The store also owns the schema: migrations (recorded as
`(:Migration)` nodes) and the embedding space the vector indexes are sized for.

Cluster-ready: `read` runs in a managed read transaction (routed to a secondary under a
`neo4j://` URI), `write` and `transaction` in managed write transactions (the leader), retried on
transient errors. Every one of them, and the sessions the store opens, shares the driver's
`execute_query_bookmark_manager`, so a read that follows the caller's own write waits for it on
whichever server serves the read (causal consistency). `autocommit` is the one exception, for
statements that manage their own transactions (`CALL ... IN TRANSACTIONS`). See docs/cluster.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncManagedTransaction
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired, TransientError

import kg.cypher as cypher
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.settings.tree import Settings
from kg.core.store.capabilities import UNKNOWN, Capabilities
from kg.core.store.index_shapes import DROPS, IndexShape
from kg.core.telemetry.hooks import statement

log = logging.getLogger(__name__)
T = TypeVar("T")
DEADLOCK_ROUNDS = 6  # rounds of the driver's retry budget a write transaction gets on transient errors
PROBE_S = 0.8  # while the database is down, a statement waits at most this long for one shared ping


class _Unlogged(list):
    """A list parameter whose repr is its length. The driver formats every statement's parameters
    for its debug log whether that log is on or not (`" ".join(map(repr, fields))` in neo4j 6.4's
    `Bolt5x5.run`); for a batch of ten turns with their vectors that was 2 ms of the event loop
    per write, a quarter of the API's busy time under overload. It packs as the list it is."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


def _params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: _Unlogged(v) if type(v) is list else v for k, v in params.items()}


class StoreError(RuntimeError):
    """The database cannot be used as configured; the message says why and what to do."""


class EmbedderMismatch(StoreError):
    pass


class DatabaseUnreachable(StoreError):
    """No connection to the database (down, or still starting): retrying later can help."""


def unavailable(exc: BaseException) -> bool:
    """The database cannot serve now (HTTP 503, an MCP `database_unavailable`): unreachable, a
    connection lost, or a database that is not online yet (Neo4j starting: `DatabaseUnavailable`)."""
    if isinstance(exc, (StoreError, ServiceUnavailable, SessionExpired)):
        return True
    return isinstance(exc, Neo4jError) and "DatabaseUnavailable" in (exc.code or "")


@dataclass(frozen=True)
class Connection:
    uri: str
    user: str
    password: str | None
    database: str
    managed: bool


def resolve_connection(settings: Settings, start: bool = True) -> Connection:
    """Configured URI, or the managed local server (started when `start`)."""
    cfg = settings.neo4j
    password = cfg.password.get_secret_value() if cfg.password else None
    if cfg.uri:
        return Connection(cfg.uri, cfg.user, password, cfg.database, managed=False)
    local = LocalNeo4j(cfg.local, password)
    if start:
        local.start(echo=log.info)
    return Connection(local.bolt_uri, cfg.user, local.password(), cfg.database, managed=True)


class Store:
    def __init__(self, driver: AsyncDriver, database: str, capabilities: Capabilities = UNKNOWN) -> None:
        self.driver = driver
        self.database = database
        self.capabilities = capabilities  # asked of the server once, by `connect`
        self._down = False  # a statement found the database unavailable; cleared by a ping that answers
        self._probe: asyncio.Future[None] | None = None

    @classmethod
    async def connect(cls, settings: Settings) -> "Store":
        conn = resolve_connection(settings)
        auth = (conn.user, conn.password) if conn.password is not None else None
        cfg = settings.neo4j
        driver = AsyncGraphDatabase.driver(  # timeouts: with the database down, fail in about a second
            conn.uri, auth=auth, max_connection_pool_size=50, notifications_min_severity="OFF",
            connection_timeout=cfg.connection_timeout_s,
            connection_acquisition_timeout=cfg.connection_acquisition_timeout_s,
            max_transaction_retry_time=cfg.max_transaction_retry_time_s,
        )
        try:
            await driver.verify_connectivity()
        except AuthError as exc:
            await driver.close()
            hint = ("the local database keeps the password it was first started with (see "
                    f"{LocalNeo4j(settings.neo4j.local).password_file})") if conn.managed else "check NEO4J_PASSWORD"
            raise StoreError(f"Neo4j at {conn.uri} refused the credentials of user {conn.user!r}: {hint}") from exc
        except (ServiceUnavailable, OSError) as exc:
            await driver.close()
            raise DatabaseUnreachable(f"cannot reach Neo4j at {conn.uri}: {exc}") from exc
        store = cls(driver, conn.database)
        try:
            store.capabilities = await store.probe_capabilities()
        except BaseException:
            await driver.close()
            raise
        log.info("Neo4j at %s: %s", conn.uri, store.capabilities.as_dict())
        return store

    async def probe_capabilities(self) -> Capabilities:
        """Ask the server its version and edition, and whether it takes Cypher 25 (kg.core.capabilities)."""
        components = await self.read("database/server_components")
        try:
            await self.read("database/server_cypher25")
            takes_cypher25 = True
        except Neo4jError as exc:
            if unavailable(exc):
                raise
            takes_cypher25 = False
        return Capabilities.of(components, takes_cypher25)

    async def close(self) -> None:
        await self.driver.close()

    # -- statements -------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _watched(self) -> AsyncIterator[None]:
        """Fail fast while the database is down. The driver spends up to about 4 s on a statement
        against a server that accepts connections but does not answer (two connection attempts and
        a retry); once one statement (or a ping) has found it down, the next ones wait only for one
        shared ping (`PROBE_S`) and fail at once if it does not answer. A ping that answers ends it."""
        if self._down:
            if self._probe is None or self._probe.done():
                self._probe = asyncio.ensure_future(self.ping(PROBE_S))
            try:
                await asyncio.shield(self._probe)
            except Exception as exc:
                raise ServiceUnavailable(f"the database cannot be reached ({type(exc).__name__})") from exc
            self._down = False
        try:
            yield
        except Exception as exc:
            if unavailable(exc):
                self._down = True
            raise

    async def _execute(self, name: str, params: dict[str, Any], routing: neo4j.RoutingControl) -> list[neo4j.Record]:
        with statement(name):
            async with self._watched():
                records, _, _ = await self.driver.execute_query(self._text(name), _params(params),
                                                                database_=self.database, routing_=routing)
        return records

    def _text(self, name: str) -> str:
        """The statement `name` as this server runs it (its Cypher 25 variant where one exists)."""
        return cypher.load(cypher.variant(name, self.capabilities.path))

    async def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        return [r.data() for r in await self._execute(name, params, neo4j.RoutingControl.READ)]

    async def read_row(self, name: str, **params: Any) -> dict[str, Any]:
        """The one row of a read query that returns its result as lists (the retrieval queries), with
        the values as the driver decodes them: `read`'s per-value graph-to-dict pass is skipped, which
        on a few thousand list elements cost more than the query."""
        records = await self._execute(name, params, neo4j.RoutingControl.READ)
        return dict(zip(records[0].keys(), records[0].values())) if records else {}

    async def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        return [r.data() for r in await self._execute(name, params, neo4j.RoutingControl.WRITE)]

    async def autocommit(self, name: str, **params: Any) -> None:
        """For statements that manage their own transactions (`CALL ... IN TRANSACTIONS`): an
        auto-commit transaction, sent to the leader, not retried; it joins the shared bookmarks."""
        with statement(name):
            async with self._watched(), self._session(neo4j.WRITE_ACCESS) as session:
                result = await session.run(self._text(name), _params(params))
                await result.consume()

    async def transaction(self, work: Callable[["Tx"], Awaitable[T]]) -> T:
        """Run `work` in one write transaction, retried as a whole on transient errors (deadlocks)."""

        async def unit(tx: AsyncManagedTransaction) -> T:
            return await work(Tx(tx, self.capabilities.path))

        async def once() -> T:
            async with self._watched(), self._session(neo4j.WRITE_ACCESS) as session:
                return await session.execute_write(unit)

        return await _past_deadlocks(once)

    async def ping(self, timeout_s: float) -> None:
        """One round trip, not retried: raises ServiceUnavailable when there is no answer in `timeout_s`."""
        async def once() -> None:
            async with self.driver.session(database=self.database) as session:
                result = await session.run(cypher.load("database/health"))
                await result.consume()

        try:
            await asyncio.wait_for(once(), timeout_s)
        except (asyncio.TimeoutError, OSError) as exc:
            self._down = True  # the statements that follow fail fast (`_watched`)
            raise ServiceUnavailable(f"the database did not answer within {timeout_s} s") from exc
        except Exception as exc:
            if unavailable(exc):
                self._down = True
            raise

    def _session(self, access: str) -> neo4j.AsyncSession:
        """A session in the bookmark chain `execute_query` uses: reads after it see its writes."""
        return self.driver.session(database=self.database, default_access_mode=access,
                                   bookmark_manager=self.driver.execute_query_bookmark_manager)

    # -- schema -----------------------------------------------------------------------------
    async def migrate(self, embedder_name: str, dim: int) -> list[str]:
        """Apply pending migrations, check the embedding space, ensure vector indexes. Idempotent."""
        done = await self.migrate_structure()
        await self.check_embedding_space(embedder_name, dim)
        await self.ensure_vector_indexes(dim)
        return done

    async def migrate_structure(self) -> list[str]:
        """Apply the numbered files of `cypher/migrations/` not yet recorded as `(:Migration)`."""
        applied = {r["id"] for r in await self.read("database/migration_applied")}
        done: list[str] = []
        for name in cypher.migrations():
            if name in applied:
                continue
            # auto-commit, so that a data migration can batch itself (`CALL ... IN TRANSACTIONS`)
            for text in cypher.statements(name):
                await self._schema_statement(text)
            checksum = hashlib.sha256(cypher.load(name).encode()).hexdigest()[:16]
            await self.write("database/migration_record", id=name, checksum=checksum)
            done.append(name)
        return done

    async def _schema_statement(self, text: str, params: dict[str, Any] | None = None) -> None:
        """An idempotent schema or migration statement, auto-commit. Processes opening a new database at
        once all create its schema: a rule another has just created is what `IF NOT EXISTS` asked for
        (Neo4j refuses the second of two concurrent creations as an equivalent rule), and a deadlock on
        the schema's lock is tried again."""
        async def once() -> None:
            try:
                async with self.driver.session(database=self.database) as session:
                    await (await session.run(text, params)).consume()
            except Neo4jError as exc:
                if exc.code != "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists":
                    raise

        await _past_deadlocks(once)

    async def check_embedding_space(self, embedder_name: str, dim: int) -> None:
        rows = await self.read("database/embedding_space_get")
        if not rows:
            await self.write("database/embedding_space_set", model=embedder_name, dim=dim)
            return
        stored = rows[0]
        if stored["model"] != embedder_name or stored["dim"] != dim:
            raise EmbedderMismatch(
                f"this database holds {stored['model']} vectors (dim {stored['dim']}) but the configured "
                f"embedder is {embedder_name} (dim {dim}). Run `kg reembed` to re-embed everything and rebuild "
                "the vector indexes, or switch [embedding] back."
            )

    async def ensure_vector_indexes(self, dim: int) -> None:
        await self._ensure_indexes("schema/vector_indexes", dim)

    async def _ensure_indexes(self, name: str, dim: int) -> None:
        """Create the vector indexes of schema file `name` in this server's form (with the tenant's
        filter properties on "cypher25"); one of the same name but another shape (made by an earlier
        version, or before the server's upgrade to the calendar line) is dropped and built again,
        since an index's properties cannot change in place."""
        have = {r["name"]: r for r in await self.read("database/vector_index_shapes")}
        for text in cypher.statements(cypher.variant(name, self.capabilities.path)):
            shape = IndexShape.of(text)
            if shape.name in have and not shape.matches(have[shape.name]):
                log.warning("rebuilding vector index %s as %s: start-up waits (up to 300 s) while it is "
                            "populated from the stored vectors", shape.name, shape.describe())
                await self.driver.execute_query(DROPS[shape.name], database_=self.database)
            await self._schema_statement(text, {"dim": dim})
        await self.driver.execute_query("CALL db.awaitIndexes(300)", database_=self.database)

    async def ensure_fallback_space(self, embedder_name: str, dim: int) -> None:
        """The fallback embedder's index, sized for it. Its vectors are of one model: another fallback
        model is refused while any of the first one's vectors is left (`kg reembed` replaces them)."""
        stored = (await self.read("database/fallback_space_get"))[0]
        if (stored["model"], stored["dim"]) != (embedder_name, dim):
            if stored["vectors"]:
                raise EmbedderMismatch(
                    f"this database holds {stored['vectors']} fallback vectors of {stored['model']} but the "
                    f"configured [embedding] fallback is {embedder_name}. Run `kg reembed` while the primary "
                    "embedder answers, or switch the fallback back.")
            if stored["dim"] is not None and stored["dim"] != dim:
                for statement in cypher.statements("schema/drop_fallback_vector_indexes"):
                    await self.driver.execute_query(statement, database_=self.database)
            await self.write("database/fallback_space_set", model=embedder_name, dim=dim)
        await self._ensure_indexes("schema/fallback_vector_indexes", dim)

    async def drop_vector_indexes(self) -> None:
        for text in cypher.statements("schema/drop_vector_indexes"):
            await self.driver.execute_query(text, database_=self.database)

    async def rebuild_vector_indexes(self, embedder_name: str, dim: int) -> None:
        """After a re-embed: record the new embedding space and build its indexes."""
        await self.drop_vector_indexes()
        await self.write("database/embedding_space_set", model=embedder_name, dim=dim)
        await self.ensure_vector_indexes(dim)


async def _past_deadlocks(once: Callable[[], Awaitable[T]]) -> T:
    """`once()`, run again after a transient error (a deadlock) for up to DEADLOCK_ROUNDS rounds, backing
    off. The driver's own retry budget is short so that a database that is down fails fast ([neo4j]
    max_transaction_retry_time_s); deadlocks between live writers get more rounds here."""
    for attempt in range(DEADLOCK_ROUNDS):
        try:
            return await once()
        except TransientError as exc:
            if attempt == DEADLOCK_ROUNDS - 1 or unavailable(exc):  # a database not online is no deadlock
                raise
            await asyncio.sleep(0.05 * 2 ** attempt)
    raise AssertionError("unreachable")


class Tx:
    """A write transaction handed to `Store.transaction` work; statements by name only."""

    def __init__(self, tx: AsyncManagedTransaction, path: str) -> None:
        self._tx = tx
        self._path = path

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        with statement(name):
            result = await self._tx.run(cypher.load(cypher.variant(name, self._path)), _params(params))
            return await result.data()

    async def rows(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """`run`, with the values as the driver decodes them: `data()`'s per-value graph-to-dict pass
        is skipped (for rows of maps, lists and scalars it returns the same values), which on a
        session's turn vectors cost more of the event loop than the statement."""
        with statement(name):
            result = await self._tx.run(cypher.load(cypher.variant(name, self._path)), _params(params))
            return [dict(zip(r.keys(), r.values())) async for r in result]

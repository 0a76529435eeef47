"""What differs between the lines of Neo4j releases the managed server runs, in one place.

The 5.26 LTS line and the calendar-versioned line (2025.01 and later) differ, for the launcher, in
the Java they run on and in the main class (read from the server's own jar, `LocalNeo4j.entry_point`).
The configuration below is valid on both: each name was checked against 5.26.30 and 2026.08.1 (the
server refuses an unknown name at start). What differs in Cypher is asked of the server itself, once
per connection (kg.core.store.capabilities).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kg.core.settings.tree import LocalServerSettings

# The `server.jvm.additional` set of the official launcher (5.26 and 2026.x), needed on Java 17+.
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.stream=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]


@dataclass(frozen=True)
class Line:
    """A line of Neo4j releases: what differs in how the managed server is run."""

    key: str  # names the server's folder in the data folder: neo4j-5, neo4j-calendar
    name: str
    java: tuple[int, ...]  # the Java major versions it runs on


LTS = Line("5", "5.26 LTS", (17, 21))
CALENDAR = Line("calendar", "calendar versions (2025.01 and later)", (21,))


def line_of(version: str) -> Line:
    head = version.split(".", 1)[0]
    return CALENDAR if head.isdigit() and int(head) >= 2025 else LTS



def server_conf(s: LocalServerSettings, home: Path) -> str:
    """The `neo4j.conf` of a managed server: loopback only, its folders under `home`."""
    conf = {
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.listen_address": f"127.0.0.1:{s.bolt_port}",
        "server.bolt.advertised_address": f"127.0.0.1:{s.bolt_port}",
        "server.http.listen_address": f"127.0.0.1:{s.http_port}",
        "server.http.advertised_address": f"127.0.0.1:{s.http_port}",
        "server.https.enabled": "false",
        "server.directories.data": str(home / "data"),
        "server.directories.logs": str(home / "logs"),
        "server.directories.run": str(home / "run"),
        "server.directories.plugins": str(home / "plugins"),
        "server.directories.import": str(home / "import"),
        "server.memory.pagecache.size": s.page_cache,
        "dbms.memory.transaction.total.max": "0",
        "dbms.security.auth_enabled": str(s.auth).lower(),
        "dbms.usage_report.enabled": "false",
        "db.tx_log.rotation.retention_policy": "2 files",
    }
    return "# Written by `kg neo4j start`; edit kg.toml instead.\n" + "".join(f"{k}={v}\n" for k, v in conf.items())

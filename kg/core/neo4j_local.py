"""The managed local Neo4j 5.26 Community server, assembled from Maven Central (no Docker).

`install` resolves `org.neo4j:neo4j` and `org.neo4j.client:neo4j-browser` with Maven into a
cache folder; `start` writes `neo4j.conf` (loopback only) and runs
`org.neo4j.server.CommunityEntryPoint` with the JVM flags of the official launcher.
Data, logs, configuration and the pid file live under the project's data folder.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kg.core.config import LocalServerSettings

# The `server.jvm.additional` set of the official 5.26 launcher, needed on Java 17+.
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

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kg.local</groupId><artifactId>neo4j-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId><version>{version}</version></dependency>
    <dependency><groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId><version>{browser}</version></dependency>
  </dependencies>
</project>
"""


class LocalServerError(RuntimeError):
    """A problem with the managed local server; the message says what to do."""


@dataclass(frozen=True)
class ServerStatus:
    installed: bool
    running: bool
    pid: int | None
    bolt_uri: str
    browser_url: str
    version: str
    home: Path
    log_file: Path


class LocalNeo4j:
    def __init__(self, settings: LocalServerSettings, password: str | None = None) -> None:
        self.settings = settings
        self.runtime = (settings.install_dir / f"neo4j-{settings.version}-browser-{settings.browser_version}").resolve()
        self.home = settings.data_dir.resolve() / "neo4j"
        self._password = password

    # -- paths ------------------------------------------------------------------------------
    @property
    def lib_dir(self) -> Path:
        return self.runtime / "lib"

    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "neo4j.pid"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.http_port}/browser/"

    # -- install ----------------------------------------------------------------------------
    def is_installed(self) -> bool:
        return (self.runtime / ".complete").is_file()

    def install(self, echo: Callable[[str], None] = print) -> Path:
        """Resolve the server and Browser jars with Maven (idempotent; instant when present)."""
        if self.is_installed():
            return self.lib_dir
        _require_java()
        mvn = shutil.which("mvn")
        if mvn is None:
            raise LocalServerError("Maven (mvn) is not on PATH; install Maven 3 to assemble the local Neo4j")
        self.runtime.mkdir(parents=True, exist_ok=True)
        (self.runtime / "pom.xml").write_text(
            POM.format(version=self.settings.version, browser=self.settings.browser_version)
        )
        staging = self.runtime / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        echo(f"Resolving Neo4j {self.settings.version} and Browser {self.settings.browser_version} with Maven...")
        cmd = [mvn, "-B", "-q", "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
               "-DincludeScope=runtime"]
        proc = subprocess.run(cmd, cwd=self.runtime, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
            raise LocalServerError(f"Maven could not resolve Neo4j {self.settings.version}:\n{tail}")
        shutil.rmtree(self.lib_dir, ignore_errors=True)
        staging.rename(self.lib_dir)
        jars = len(list(self.lib_dir.glob("*.jar")))
        (self.runtime / ".complete").write_text(f"{self.settings.version} {jars} jars\n")
        echo(f"Installed {jars} jars in {self.lib_dir}")
        return self.lib_dir

    # -- start / stop -----------------------------------------------------------------------
    def pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def status(self) -> ServerStatus:
        pid = self.pid()
        return ServerStatus(
            installed=self.is_installed(),
            running=pid is not None and _port_open(self.settings.bolt_port),
            pid=pid,
            bolt_uri=self.bolt_uri,
            browser_url=self.browser_url,
            version=self.settings.version,
            home=self.home,
            log_file=self.log_file,
        )

    def password(self) -> str | None:
        """The configured password, or the one generated for this data folder at first start."""
        if not self.settings.auth:
            return None
        if self._password:
            return self._password
        if self.password_file.is_file():
            return self.password_file.read_text().strip()
        return None

    def start(self, echo: Callable[[str], None] = print) -> ServerStatus:
        """Start the server (installing it first if needed) and wait until Bolt answers."""
        if self.pid() is not None:
            return self.status()
        self.install(echo)
        java = _require_java()
        for port in (self.settings.bolt_port, self.settings.http_port):
            if _port_open(port):
                raise LocalServerError(
                    f"port {port} on 127.0.0.1 is already taken by another process; stop it or choose "
                    "other ports with [neo4j.local] bolt_port / http_port (or KG_NEO4J__LOCAL__BOLT_PORT)"
                )
        data_dir = self.settings.data_dir.resolve()  # holds the password and the database: owner only
        if not data_dir.exists() or data_dir.name == ".kg":  # never tighten a folder the user chose to share
            _private_dir(data_dir)
        _private_dir(self.home)
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        self._write_conf()
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}
        if self.settings.auth and not (self.home / "data" / "dbms" / "auth.ini").exists():
            self._set_initial_password(java, env)
        cmd = [java, f"-Xms{self.settings.heap}", f"-Xmx{self.settings.heap}", *JVM_FLAGS,
               "-cp", f"{self.lib_dir}/*", "org.neo4j.server.CommunityEntryPoint",
               f"--home-dir={self.home}", f"--config-dir={self.conf_dir}", "--console-mode"]
        log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        log = open(self.log_file, "ab")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=self.home, start_new_session=True)
        log.close()
        self.pid_file.write_text(str(proc.pid))
        deadline = time.monotonic() + self.settings.start_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise LocalServerError(
                    f"Neo4j exited during start (code {proc.returncode}); log {self.log_file}:\n{self.log_tail()}"
                )
            if _port_open(self.settings.bolt_port) and b"Started." in _read_from(self.log_file, log_offset):
                echo(f"Neo4j {self.settings.version} running (pid {proc.pid}) at {self.bolt_uri}; "
                     f"Browser {self.browser_url}; logs {self.log_file}")
                return self.status()
            time.sleep(0.25)
        self.stop()
        raise LocalServerError(
            f"Neo4j did not answer on Bolt within {self.settings.start_timeout_s:.0f}s; "
            f"log {self.log_file}:\n{self.log_tail()}"
        )

    def stop(self, echo: Callable[[str], None] = print) -> bool:
        """Stop cleanly (SIGTERM), forcefully after the timeout. False if it was not running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.stop_timeout_s
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            echo(f"Neo4j (pid {pid}) did not stop within {self.settings.stop_timeout_s:.0f}s; killing it")
            os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.1)
        self.pid_file.unlink(missing_ok=True)
        echo(f"Neo4j (pid {pid}) stopped")
        return True

    def log_tail(self, lines: int = 30) -> str:
        text = _read_tail(self.log_file, 16000).decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    # -- internals --------------------------------------------------------------------------
    def _write_conf(self) -> None:
        s = self.settings
        conf = {
            "server.default_listen_address": "127.0.0.1",
            "server.default_advertised_address": "127.0.0.1",
            "server.bolt.listen_address": f"127.0.0.1:{s.bolt_port}",
            "server.bolt.advertised_address": f"127.0.0.1:{s.bolt_port}",
            "server.http.listen_address": f"127.0.0.1:{s.http_port}",
            "server.http.advertised_address": f"127.0.0.1:{s.http_port}",
            "server.https.enabled": "false",
            "server.directories.data": str(self.home / "data"),
            "server.directories.logs": str(self.home / "logs"),
            "server.directories.run": str(self.home / "run"),
            "server.directories.plugins": str(self.home / "plugins"),
            "server.directories.import": str(self.home / "import"),
            "server.memory.pagecache.size": s.page_cache,
            "dbms.memory.transaction.total.max": "0",
            "dbms.security.auth_enabled": str(s.auth).lower(),
            "dbms.usage_report.enabled": "false",
            "db.tx_log.rotation.retention_policy": "2 files",
        }
        body = "# Written by `kg neo4j start`; edit kg.toml instead.\n"
        body += "".join(f"{k}={v}\n" for k, v in conf.items())
        (self.conf_dir / "neo4j.conf").write_text(body)

    def _set_initial_password(self, java: str, env: dict[str, str]) -> None:
        password = self._password
        if not password:  # hex: a generated password never starts with "-" (an option to shells and tools)
            password = secrets.token_hex(16)
            _write_private(self.password_file, password + "\n")
        self._password = password
        # Never on the command line (`ps` shows it to every local user): the admin tool reads its
        # arguments from an owner-only @-file (picocli argument file), removed right after. "--": a
        # configured password may start with "-", which the tool would read as an option.
        quoted = '"' + password.replace("\\", "\\\\").replace('"', '\\"') + '"'
        args = self.home / "run" / "initial-password.args"
        _write_private(args, f"--\n{quoted}\n")
        cmd = [java, "-cp", f"{self.lib_dir}/*", "org.neo4j.cli.AdminTool", "dbms",
               "set-initial-password", f"@{args}"]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        finally:
            args.unlink(missing_ok=True)
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr).replace(password, "***")
            raise LocalServerError(f"setting the initial Neo4j password failed:\n{out[-2000:]}")


def _private_dir(path: Path) -> None:
    """A folder only its owner can enter (created so, or tightened if it exists)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


def _write_private(path: Path, text: str) -> None:
    """Write `text` to a file that is owner-only from its creation (no write-then-chmod window)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def _require_java() -> str:
    java = shutil.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")) if os.environ.get(
        "JAVA_HOME") else None
    java = java or shutil.which("java")
    if java is None:
        raise LocalServerError("Java 17 or 21 is needed to run the local Neo4j 5.26, and `java` is not on PATH")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', out)
    major = int(match.group(1)) if match else 0
    if major not in (17, 21):
        raise LocalServerError(f"Neo4j 5.26 runs on Java 17 or 21; `{java}` is Java {major or 'unknown'}. "
                               "Set JAVA_HOME to a Java 17 or 21 installation")
    return java


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return True


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _read_from(path: Path, offset: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read()
    except OSError:
        return b""


def _read_tail(path: Path, size: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, path.stat().st_size - size))
            return fh.read()
    except OSError:
        return b""

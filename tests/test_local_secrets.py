"""Local secrets: the generated Neo4j password never appears on a command line during the first
start, the files holding it are owner-only from their creation, and refused keys are logged
without the key. The first start runs a spare managed server in a temporary folder."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
from pathlib import Path

import pytest

from kg import load_settings
from kg.access import key_digest
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.settings.tree import HttpSettings
from kg.http import create_app
from tests.http_client import running
from tests.ports import free_port

pytestmark = pytest.mark.neo4j  # a spare managed server; an app that opens the database


def command_lines() -> list[str]:
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return lines


def stored_password_matches(auth_ini: Path, password: str) -> bool:
    """Neo4j's file realm: `user:SHA-256,<hash>,<salt>,<iterations>:`, the hash iterated over salt+password."""
    _, credential, _ = auth_ini.read_text().strip().split(":", 2)
    _, digest, salt, iterations = credential.split(",")
    value = hashlib.sha256(bytes.fromhex(salt) + password.encode()).digest()
    for _ in range(int(iterations) - 1):
        value = hashlib.sha256(value).digest()
    return value.hex() == digest


def test_first_start_keeps_the_password_off_command_lines(tmp_path: Path) -> None:
    data_dir = tmp_path / ".kg"
    cfg = load_settings().neo4j.local.model_copy(update={
        "data_dir": data_dir, "bolt_port": free_port(), "http_port": free_port(), "heap": "256m",
        "page_cache": "32m"})
    server = LocalNeo4j(cfg)
    seen: list[str] = []
    done = threading.Event()

    def watch() -> None:  # what `ps` shows, sampled all through the first start
        while not done.is_set():
            seen.extend(line for line in command_lines() if "AdminTool" in line or "neo4j" in line.lower())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        server.start(echo=lambda _: None)
    finally:
        done.set()
        watcher.join()
    try:
        password = server.password()
        assert password and len(password) == 32
        assert any("set-initial-password" in line for line in seen), "the admin tool run was not observed"
        assert not [line for line in seen if password in line]
        assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE(server.home.stat().st_mode) == 0o700
        assert not list(server.home.rglob("*.args"))  # the argument file is gone
        assert stored_password_matches(server.home / "data" / "dbms" / "auth.ini", password)
    finally:
        server.stop(echo=lambda _: None)


async def test_refused_keys_are_logged_without_the_key(caplog: pytest.LogCaptureFixture) -> None:
    secret = "kg-secret-key-never-in-logs-0123456789"
    other = "kg-other-key-never-in-logs-9876543210"
    base = load_settings()
    settings = base.model_copy(update={"http": HttpSettings(**{**base.http.model_dump(), "keys": {
        key_digest(secret): ["team-a"], key_digest(other): ["team-b"]}})})
    app = create_app(settings)
    caplog.set_level(logging.WARNING, logger="kg.http")
    async with running(app) as api:
        wrong = await api.get("/v1/namespaces/team-a/facts", params={"subject": "u"}, headers={"X-API-Key": "nope-123"})
        assert wrong.status_code == 401
        forbidden = await api.get("/v1/namespaces/team-a/facts", params={"subject": "u"},
                                  headers={"X-API-Key": other})
        assert forbidden.status_code == 403
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "401 GET /v1/namespaces/team-a/facts" in logged and "403 GET /v1/namespaces/team-a/facts" in logged
    assert secret not in logged and other not in logged and "nope-123" not in logged

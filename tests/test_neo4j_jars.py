"""`kg neo4j install` without Maven: jars fetched against a lock (path, size, SHA-256) into a staging
folder, a bad or short jar refused by name, a second run that keeps what was checked and continues a
partial file, and `--from` a folder or a `kg neo4j bundle` archive with no network. The repository
is a small one served on loopback (with HTTP ranges, as Maven Central serves them)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from kg import load_settings
from kg.core.local_neo4j.jars import Archive, Folder, JarError, Lock, LockedJar, Repository, bundle, install, lock_for
from kg.core.local_neo4j.server import LocalNeo4j

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["org/neo4j/neo4j/9.9.9/neo4j-9.9.9.jar", "io/netty/netty-common/4.2.0/netty-common-4.2.0.jar",
         "org/neo4j/client/neo4j-browser/5.24.0/neo4j-browser-5.24.0.jar"]


class Served:
    """A Maven repository layout on loopback: GET with `Range: bytes=N-` answered 206; each request logged."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[tuple[str, str | None]] = []
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("/repo/", 1)[-1]
                served.requests.append((path, self.headers.get("Range")))
                file = served.root / path
                if not file.is_file():
                    self.send_error(404)
                    return
                data = file.read_bytes()
                start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") else 0
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                self.wfile.write(data[start:])

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/repo"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def fetched(self) -> list[str]:
        return [p.rsplit("/", 1)[-1] for p, _ in self.requests]


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[tuple[Served, Lock]]:
    """Three jars of random bytes in a repository on loopback, and their lock."""
    root = tmp_path / "repo"
    jars = []
    for i, path in enumerate(PATHS):
        data = os.urandom(200_000 + 70_001 * i)
        (root / path).parent.mkdir(parents=True)
        (root / path).write_bytes(data)
        jars.append(LockedJar(path, len(data), hashlib.sha256(data).hexdigest()))
    served = Served(root)
    yield served, Lock("9.9.9", "5.24.0", tuple(jars))
    served.server.shutdown()


def same_bytes(lib: Path, root: Path) -> bool:
    return all((lib / p.rsplit("/", 1)[-1]).read_bytes() == (root / p).read_bytes() for p in PATHS)


def test_install_checks_every_jar_and_renames_the_staging_folder_into_place(repo: tuple[Served, Lock],
                                                                            tmp_path: Path) -> None:
    served, lock = repo
    lib = tmp_path / "runtime" / "lib"
    progress: list[tuple[int, int]] = []
    assert install(lock, lib, Repository(served.url), lambda done, total: progress.append((done, total))) == 3
    assert sorted(os.listdir(lib)) == sorted(p.rsplit("/", 1)[-1] for p in PATHS) and same_bytes(lib, served.root)
    assert not (tmp_path / "runtime" / "lib.partial").exists()
    assert progress[-1] == (lock.size, lock.size)


@pytest.mark.parametrize("damage", ["corrupted", "truncated"])
def test_a_bad_jar_is_refused_by_name_and_a_second_run_fetches_only_it(repo: tuple[Served, Lock], tmp_path: Path,
                                                                       damage: str) -> None:
    served, lock = repo
    bad = served.root / PATHS[1]
    good = bad.read_bytes()
    bad.write_bytes(good[:1000] if damage == "truncated" else good[:500] + bytes([good[500] ^ 1]) + good[501:])
    lib = tmp_path / "runtime" / "lib"
    with pytest.raises(JarError) as info:
        install(lock, lib, Repository(served.url))
    message = str(info.value)
    assert "1 of 3 jars" in message and "netty-common-4.2.0.jar" in message and "refused" in message
    assert ("1000 bytes, the lock says" if damage == "truncated" else "SHA-256") in message
    assert not lib.exists()  # nothing in place until every jar is checked
    staged = sorted(os.listdir(tmp_path / "runtime" / "lib.partial"))
    assert staged == ["neo4j-9.9.9.jar", "neo4j-browser-5.24.0.jar"]  # the refused one removed
    bad.write_bytes(good)
    served.requests.clear()
    assert install(lock, lib, Repository(served.url)) == 1
    assert served.fetched() == ["netty-common-4.2.0.jar"] and same_bytes(lib, served.root)


def test_a_partial_download_continues_where_it_stopped(repo: tuple[Served, Lock], tmp_path: Path) -> None:
    served, lock = repo
    staging = tmp_path / "runtime" / "lib.partial"
    staging.mkdir(parents=True)
    whole = (served.root / PATHS[2]).read_bytes()
    (staging / "neo4j-browser-5.24.0.jar.part").write_bytes(whole[:123_456])
    install(lock, tmp_path / "runtime" / "lib", Repository(served.url))
    assert (PATHS[2], "bytes=123456-") in served.requests
    assert same_bytes(tmp_path / "runtime" / "lib", served.root)


def test_from_a_folder_or_a_bundle_with_no_network(repo: tuple[Served, Lock], tmp_path: Path) -> None:
    served, lock = repo
    first = tmp_path / "first" / "lib"
    install(lock, first, Folder(served.root))  # a folder in the repository's layout, found by file name
    served.server.shutdown()  # no network from here on
    archive = bundle(lock, first, tmp_path / "kg-neo4j-9.9.9.zip")
    second = tmp_path / "second" / "lib"
    assert install(lock, second, Archive(archive)) == 3 and same_bytes(second, served.root)
    with pytest.raises(JarError, match="cannot reach"):
        install(lock, tmp_path / "third" / "lib", Repository(served.url))


def test_the_shipped_locks_pin_both_lines() -> None:
    for version in ("2026.08.1", "5.26.30"):
        lock = lock_for(version, "5.24.0")
        assert lock is not None and lock.neo4j == version
        names = [j.name for j in lock.jars]
        assert f"neo4j-{version}.jar" in names and "neo4j-browser-5.24.0.jar" in names
        assert len(set(names)) == len(names)  # lib/ is flat
        assert all(len(j.sha256) == 64 and j.size > 0 for j in lock.jars)
        assert Lock.parse(lock.render()) == lock
    assert lock_for("2026.08.1", "5.21.0") is None  # another Browser: no lock, Maven


def test_cli_bundle_then_install_from_it_with_the_repository_unreachable(tmp_path: Path) -> None:
    """The doors: `kg neo4j bundle` of the installed jars, then `kg neo4j install --from` it into an empty
    cache with the repository refused; every jar of the result matches the lock."""
    installed = LocalNeo4j(load_settings().neo4j.local)
    if not installed.is_installed() or lock_for(installed.settings.version, installed.settings.browser_version) is None:
        pytest.skip("the configured Neo4j is not installed from a lock here (`kg neo4j install` first)")
    env = {**os.environ, "KG_NEO4J__LOCAL__REPOSITORY": "http://127.0.0.1:9/maven2"}
    archive = tmp_path / "bundle.zip"
    done = subprocess.run([sys.executable, "-m", "kg.cli", "neo4j", "bundle", "-o", str(archive)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    env["KG_NEO4J__LOCAL__INSTALL_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-m", "kg.cli", "neo4j", "install", "--from", str(archive)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lock = lock_for(installed.settings.version, installed.settings.browser_version)
    assert lock is not None
    lib = next((tmp_path / "cache").glob("neo4j-*/lib"))
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in lib.iterdir()} == {
        j.name: j.sha256 for j in lock.jars}

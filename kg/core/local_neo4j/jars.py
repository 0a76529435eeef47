"""The managed Neo4j's jars: a pinned lock per Neo4j version, fetched and checked without Maven.

A lock (`kg/core/local_neo4j/locks/neo4j-<version>.lock`) lists every runtime jar of `org.neo4j:neo4j`
and `org.neo4j.client:neo4j-browser` as Maven resolves them: repository path, size, SHA-256.
`install` fetches each into a staging folder beside `lib/` (from a Maven repository over HTTPS with
httpx, from a folder, or from the archive `kg neo4j bundle` writes), checks its size and digest,
and renames the staging folder into place once every jar is there: a second run keeps the jars
already checked and continues a partial file where it stopped. `python -m kg.core.local_neo4j.lock`
writes a lock with Maven (maintainers, when a pinned version moves); a version with no lock is
resolved with `mvn` as before, and says so.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import BinaryIO, Callable, Generic, Iterator, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

CHUNK = 1 << 16
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
Progress = Callable[[int, int], None]  # (bytes done, bytes in all)
T = TypeVar("T")


class JarError(RuntimeError):
    """A jar could not be had or failed its check; the message names the files and what to do."""


@dataclass(frozen=True)
class LockedJar:
    path: str  # in the repository: org/neo4j/neo4j/2026.08.1/neo4j-2026.08.1.jar
    size: int
    sha256: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Lock:
    neo4j: str
    browser: str
    jars: tuple[LockedJar, ...]

    @property
    def size(self) -> int:
        return sum(j.size for j in self.jars)

    def render(self) -> str:
        head = (f"# Neo4j {self.neo4j} Community and Neo4j Browser {self.browser}: the runtime jars as Maven\n"
                f"# resolves them (sha256, size, path). Written by `python -m kg.core.local_neo4j.lock {self.neo4j}`.\n"
                f"neo4j {self.neo4j}\nbrowser {self.browser}\n")
        return head + "".join(f"{j.sha256} {j.size} {j.path}\n" for j in self.jars)

    @classmethod
    def parse(cls, text: str) -> "Lock":
        head: dict[str, str] = {}
        jars = []
        for line in text.splitlines():
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) == 2:
                head[fields[0]] = fields[1]
            else:
                jars.append(LockedJar(fields[2], int(fields[1]), fields[0]))
        return cls(head["neo4j"], head["browser"], tuple(jars))


def locked_versions() -> list[str]:
    folder = resources.files("kg.core.local_neo4j").joinpath("locks")
    return sorted(p.name[len("neo4j-"):-len(".lock")] for p in folder.iterdir() if p.name.endswith(".lock"))


def lock_for(version: str, browser: str) -> Lock | None:
    """The shipped lock of Neo4j `version` with Browser `browser`, or None."""
    resource = resources.files("kg.core.local_neo4j").joinpath("locks", f"neo4j-{version}.lock")
    if not resource.is_file():
        return None
    lock = Lock.parse(resource.read_text("utf-8"))
    return lock if lock.browser == browser else None


# -- where jars come from -------------------------------------------------------------------------
class Source(Protocol):
    def describe(self) -> str: ...

    def open(self, jar: LockedJar, offset: int) -> Iterator[tuple[bytes, bool]]:
        """The jar's bytes from `offset` when the source can continue there (True), else from 0 (False)."""
        ...

    def close(self) -> None: ...


class Repository:
    """A Maven repository layout over HTTP(S): Maven Central, a mirror or an internal proxy."""

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        import httpx

        self.url = url.rstrip("/")
        self._client = httpx.Client(follow_redirects=True, timeout=timeout_s)

    def describe(self) -> str:
        return redact(self.url)

    def open(self, jar: LockedJar, offset: int) -> Iterator[tuple[bytes, bool]]:
        import httpx

        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            with self._client.stream("GET", f"{self.url}/{jar.path}", headers=headers) as response:
                if response.status_code not in (200, 206):
                    raise JarError(f"{jar.name}: {self.describe()} answered HTTP {response.status_code}")
                resumed = response.status_code == 206
                for chunk in response.iter_bytes(CHUNK):
                    yield chunk, resumed
        except httpx.HTTPError as exc:
            raise JarError(f"{jar.name}: cannot reach {self.describe()} ({type(exc).__name__}: {exc})") from None

    def close(self) -> None:
        self._client.close()


class _ByName(Generic[T]):
    """Jars in a local place, found by file name: `open` reads the one named from `found[name]`."""

    def __init__(self, where: Path, found: dict[str, T]) -> None:
        self._where = where
        self._found = found

    def describe(self) -> str:
        return str(self._where)

    def open(self, jar: LockedJar, offset: int) -> Iterator[tuple[bytes, bool]]:
        found = self._found.get(jar.name)
        if found is None:
            raise JarError(f"{jar.name}: not in {self._where}")
        for chunk in self._read(found):
            yield chunk, False

    def _read(self, found: T) -> Iterator[bytes]:
        raise NotImplementedError


class Folder(_ByName[Path]):
    """Jars in a folder (any depth, found by file name): a copy of `lib/`, or a Maven repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(root, {p.name: p for p in root.rglob("*.jar")})

    def _read(self, found: Path) -> Iterator[bytes]:
        with open(found, "rb") as fh:
            while chunk := fh.read(CHUNK):
                yield chunk

    def close(self) -> None:
        pass


class Archive(_ByName[str]):
    """The zip archive `kg neo4j bundle` writes (the lock and the jars)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path)
        self._lock = threading.Lock()
        super().__init__(path, {n.rsplit("/", 1)[-1]: n for n in self._zip.namelist() if n.endswith(".jar")})

    def _read(self, found: str) -> Iterator[bytes]:
        with self._lock:  # one reader of the zip at a time
            data = self._zip.read(found)
        for start in range(0, len(data), CHUNK):
            yield data[start:start + CHUNK]

    def close(self) -> None:
        self._zip.close()


def source_of(location: str) -> Source:
    """A repository URL, a folder, or a bundle archive."""
    if location.startswith(("http://", "https://")):
        return Repository(location)
    path = Path(location).expanduser()
    if path.is_dir():
        return Folder(path)
    if path.is_file() and zipfile.is_zipfile(path):
        return Archive(path)
    raise JarError(f"--from {location}: neither a folder nor an archive written by `kg neo4j bundle`")


# -- install ------------------------------------------------------------------------------------
def install(lock: Lock, lib_dir: Path, source: Source, progress: Progress | None = None,
            workers: int = 4) -> int:
    """Fetch and check every jar of `lock` into `lib_dir`'s staging folder, then rename it into place.
    Raises JarError naming each jar that could not be had or failed its check (those are removed;
    the others stay for the next run). Returns the number of jars fetched (not already staged)."""
    staging = lib_dir.with_name(lib_dir.name + ".partial")
    staging.mkdir(parents=True, exist_ok=True)
    done = [0]
    guard = threading.Lock()

    def advance(n: int) -> None:
        with guard:
            done[0] += n
            if progress:
                progress(done[0], lock.size)

    def one(jar: LockedJar) -> tuple[bool, str | None]:
        target = staging / jar.name
        if target.is_file() and target.stat().st_size == jar.size and _sha256(target) == jar.sha256:
            advance(jar.size)
            return False, None
        target.unlink(missing_ok=True)
        try:
            _fetch(jar, source, staging / (jar.name + ".part"), advance)
        except JarError as exc:
            return True, str(exc)
        (staging / (jar.name + ".part")).rename(target)
        return True, None

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, lock.jars))
    finally:
        source.close()
    problems = [p for _, p in results if p]
    if problems:
        shown = "\n  ".join(problems[:10]) + (f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else "")
        raise JarError(f"{len(problems)} of {len(lock.jars)} jars of Neo4j {lock.neo4j} are missing from "
                       f"{source.describe()} or failed their check:\n  {shown}\nThe {len(lock.jars) - len(problems)} "
                       f"checked jars stay in {staging}; run `kg neo4j install` again to fetch the rest "
                       "(`--from DIR` without a network)")
    for extra in set(os.listdir(staging)) - {j.name for j in lock.jars}:  # a leftover of another lock
        (staging / extra).unlink()
    shutil.rmtree(lib_dir, ignore_errors=True)
    staging.rename(lib_dir)
    return sum(1 for fetched, _ in results if fetched)


def _fetch(jar: LockedJar, source: Source, part: Path, advance: Callable[[int], None]) -> None:
    """Write the jar to `part` (continuing a partial one when the source can), check size and digest."""
    offset = part.stat().st_size if part.is_file() and part.stat().st_size < jar.size else 0
    digest = hashlib.sha256()
    if offset:
        with open(part, "rb") as kept:
            while chunk := kept.read(CHUNK):
                digest.update(chunk)
    written = offset
    first = True
    fh: BinaryIO | None = None
    try:
        for chunk, resumed in source.open(jar, offset):
            if first:
                first = False
                if not resumed:  # the source starts over: so do we
                    digest, written = hashlib.sha256(), 0
                else:
                    advance(offset)
                fh = open(part, "ab" if resumed else "wb")
            assert fh is not None
            fh.write(chunk)
            digest.update(chunk)
            written += len(chunk)
            advance(len(chunk))
            if written > jar.size:
                break
    finally:
        if fh is not None:
            fh.close()
    if written != jar.size or digest.hexdigest() != jar.sha256:
        part.unlink(missing_ok=True)
        what = (f"{written} bytes, the lock says {jar.size}" if written != jar.size
                else f"SHA-256 {digest.hexdigest()}, the lock says {jar.sha256}")
        raise JarError(f"{jar.name} from {source.describe()} refused: {what}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def bundle(lock: Lock, lib_dir: Path, out: Path) -> Path:
    """An archive of the installed jars and their lock, for `kg neo4j install --from` elsewhere.
    Each jar is checked against the lock on the way in."""
    tmp = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"neo4j-{lock.neo4j}.lock", lock.render())
        for jar in lock.jars:
            path = lib_dir / jar.name
            if not path.is_file() or path.stat().st_size != jar.size or _sha256(path) != jar.sha256:
                tmp.unlink()
                raise JarError(f"{path} does not match its lock: run `kg neo4j install` again")
            archive.write(path, f"jars/{jar.name}")
    tmp.replace(out)
    return out


# -- Maven: a version with no lock, and writing locks ---------------------------------------------
def maven_resolve(version: str, browser: str, dest: Path, repository_layout: bool = False) -> None:
    """`mvn dependency:copy-dependencies` of Neo4j `version` and Browser `browser` into `dest`: flat
    (a lib folder) or in the repository's layout (to write a lock from)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarError(f"Neo4j {version} with Browser {browser} has no lock in this kg-memory (locks: "
                       f"{', '.join(locked_versions())}), and resolving it needs Maven (mvn), which is not on "
                       "PATH: choose a locked [neo4j.local] version or install Maven 3")
    with tempfile.TemporaryDirectory(prefix="kg-neo4j-pom-") as work:
        Path(work, "pom.xml").write_text(POM.format(version=version, browser=browser))
        cmd = [mvn, "-B", "-q", "dependency:copy-dependencies", f"-DoutputDirectory={dest}", "-DincludeScope=runtime",
               f"-Dmdep.useRepositoryLayout={str(repository_layout).lower()}"]
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise JarError(f"Maven could not resolve Neo4j {version}:\n{tail}")


def redact(url: str) -> str:
    """The URL without a user or password (a proxy's credentials never reach a log)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urlunsplit(parts._replace(netloc=f"***@{host}" + (f":{parts.port}" if parts.port else "")))

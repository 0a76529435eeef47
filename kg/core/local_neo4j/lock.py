"""Maintainers: write the lock of a Neo4j version with Maven, when a pinned version moves.

    python -m kg.core.local_neo4j.lock 2026.08.1 [--browser 5.24.0] [--out kg/core/local_neo4j/locks]

Maven resolves `org.neo4j:neo4j` and `org.neo4j.client:neo4j-browser` (runtime scope) into a
temporary folder in the repository's layout; the lock lists each jar's path, size and SHA-256.
Users never need Maven for a locked version (`kg neo4j install` fetches and checks the jars).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kg.core.local_neo4j.jars import Lock, LockedJar, _sha256, maven_resolve

LOCKS = Path(__file__).resolve().parent / "locks"


def write_lock(version: str, browser: str, out: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="kg-neo4j-lock-") as work:
        root = Path(work)
        maven_resolve(version, browser, root, repository_layout=True)
        jars = tuple(sorted((LockedJar(p.relative_to(root).as_posix(), p.stat().st_size, _sha256(p))
                             for p in root.rglob("*.jar")), key=lambda j: j.path))
    names = [j.name for j in jars]
    if len(set(names)) != len(names):  # lib/ is flat: two jars of one name would overwrite each other
        raise SystemExit(f"two jars share a file name: {sorted(n for n in names if names.count(n) > 1)}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"neo4j-{version}.lock"
    path.write_text(Lock(version, browser, jars).render())
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="the Neo4j version, e.g. 2026.08.1 or 5.26.30")
    parser.add_argument("--browser", default="5.24.0", help="the Neo4j Browser version (org.neo4j.client)")
    parser.add_argument("--out", type=Path, default=LOCKS, help="the folder of lock files")
    args = parser.parse_args(argv)
    path = write_lock(args.version, args.browser, args.out)
    lock = Lock.parse(path.read_text())
    print(f"{path}: {len(lock.jars)} jars, {lock.size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

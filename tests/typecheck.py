"""`make typecheck`: mypy over the one import root as the wheel lays it out.

The wheel maps the top-level folders ingest/, queries/ and cypher/ into `kg` (package-dir in
pyproject.toml). mypy names a module by its folder, so it checks a tree of links built for the run
under .kg/typecheck/ (git-ignored): kg/ holds links to kg/'s entries and kg/ingest, kg/queries and
kg/cypher links to the folders. Its report names the repository's own paths.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = {"ingest": "ingest", "queries": "queries", "cypher": "cypher"}  # kg.<name> -> folder


def stage() -> Path:
    tree = ROOT / ".kg" / "typecheck"
    shutil.rmtree(tree, ignore_errors=True)
    (tree / "kg").mkdir(parents=True)
    for entry in (ROOT / "kg").iterdir():
        if entry.name != "__pycache__":
            (tree / "kg" / entry.name).symlink_to(entry)
    for name, folder in MAPPED.items():
        (tree / "kg" / name).symlink_to(ROOT / folder)
    (tree / "typecheck_usage.py").symlink_to(ROOT / "tests" / "typecheck_usage.py")
    return tree


def main() -> int:
    tree = stage()
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(ROOT / ".mypy_cache"), "kg", "typecheck_usage.py"],
                         cwd=tree, capture_output=True, text=True)
    out = run.stdout + run.stderr
    for name, folder in MAPPED.items():
        out = out.replace(f"kg/{name}/", f"{folder}/")
    out = out.replace("typecheck_usage.py", "tests/typecheck_usage.py").replace("tests/tests/", "tests/")
    sys.stdout.write(out)
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())

"""The house rules of the code, checked on every run: there is no import circle between files, and
every import points down a floor, inside `kg/` as well as between its folders, with the write path
and the read path apart. Deferred and TYPE_CHECKING imports count like any other. One import root:
`ingest/`, `queries/` and `cypher/` are `kg.ingest`, `kg.queries` and `kg.cypher`."""

from __future__ import annotations

import ast
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"kg": "kg", "ingest": "kg.ingest", "queries": "kg.queries", "cypher": "kg.cypher"}
# Lowest first. A module stands on the floor of the longest pattern it matches; it may import its own
# floor and the floors below, never a floor above.
FLOORS = [
    ("kg.core", "kg.core.*", "kg.cypher", "kg._checkout"),  # the foundation: settings, models, store, embedders, LLM transport
    ("kg.ingest", "kg.ingest.*", "kg.queries", "kg.queries.*", "kg.jobs.queue"),  # the write and read paths
    ("kg.engine", "kg.rerankers", "kg.access", "kg.batch", "kg.explain", "kg.jobs", "kg.jobs.*",
     "kg._erasure", "kg._export", "kg._history_import", "kg._review"),  # the engine, the jobs, the facade's services
    ("kg.memory", "kg.async_memory", "kg.client", "kg.client_*", "kg.synchronous",
     "kg.types"),  # the facade, the remote client, the types they take and return
    ("kg.http", "kg.http.*", "kg.mcp", "kg.mcp.*", "kg.integrations", "kg.integrations.*",
     "kg.config_reference"),  # the doors (HTTP mounts MCP's endpoint)
    ("kg", "kg.cli", "kg.cli.*", "kg.serve", "kg.langgraph_store"),  # what starts doors: the CLI, kg serve
]
APART = ("kg.ingest", "kg.queries")  # the two paths never import each other
MAX_LINES = 400
# Size follows the concept: the facade is one class of thin methods over the engine's services (its
# logic lives in modules of one job, kg._erasure, kg._export, ...); split across mixins it only
# scattered one concept over seven files. The remote client is likewise one concept, the twin of the
# facade over HTTP (httpx keeps Client and AsyncClient in one module). These alone may be longer.
LONGER = {"kg/async_memory.py": 700, "kg/client.py": 500}


def floor(module: str) -> int:
    matches = [(len(p), f) for f, patterns in enumerate(FLOORS) for p in patterns if fnmatch(module, p)]
    assert matches, f"{module} stands on no floor: add it to FLOORS"
    return max(matches)[1]


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base)
            parts = rel.with_suffix("").parts
            found[".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
    return found


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of this tree it imports (a `from package import name` of a submodule
    counts as importing that submodule)."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges[name] |= {t for t in targets if t in modules and t != name}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle() -> None:
    assert _cycles(_imports(_modules())) == []


def test_imports_point_down_and_the_paths_stay_apart() -> None:
    wrong = []
    for source, targets in _imports(_modules()).items():
        for target in targets:
            if floor(source) < floor(target):
                wrong.append(f"{source} -> {target} (floor {floor(source)} -> {floor(target)})")
            apart = [p for p in APART if source.startswith(p)], [p for p in APART if target.startswith(p)]
            if apart[0] and apart[1] and apart[0] != apart[1]:
                wrong.append(f"{source} -> {target} (the paths stay apart)")
    assert wrong == []


def test_one_import_root_and_doors_in_folders() -> None:
    assert sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()) == ["bench", "cypher", "ingest",
                                                                                       "kg", "queries"]
    for name in ("ingest", "queries", "cypher"):  # mapped by package-dir, no link in the tree
        assert not (ROOT / "kg" / name).exists()
    links = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True).stdout
    assert [ln for ln in links.splitlines() if ln.startswith("120000")] == []
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"kg": "kg"} | {f"kg.{f}": f for f in ("ingest", "queries", "cypher")}
    folders = {package + "".join("." + p for p in path.relative_to(ROOT / folder).parent.parts)
               for folder, package in FOLDERS.items() for path in (ROOT / folder).rglob("__init__.py")}
    assert sorted(setuptools["packages"]) == sorted(folders)  # every package folder ships in the wheel
    assert not [p.name for p in (ROOT / "kg").glob("*.py") if p.name.startswith(("http_", "mcp_", "cli_"))]


def test_the_checks_see_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_over_400_lines() -> None:
    long = {name: n for p in _modules().values()
            if (n := len(p.read_text().splitlines())) > LONGER.get(name := str(p.relative_to(ROOT)), MAX_LINES)}
    assert long == {}

"""Every Cypher statement the product runs, as named `.cypher` files, one folder per domain.

A statement's name is its path under `cypher/` without the suffix: `load("turns/write")` returns
the text of `cypher/turns/write.cypher`, and the store runs it as `store.write("turns/write", ...)`.
The domains: turns, sessions, summaries, entities, facts, relationships, events (explain, changes,
revert), corrections, retrieval, namespaces, erase (and the rewinding that follows it), export,
import, jobs, store_items (the LangGraph store) and database (health, capabilities, migrations
applied, embedding spaces, status). `tests/test_cypher_library.py` holds every name the code runs
to a file and every file to some code.
Beside them: `migrations/`, numbered files applied in order (`migrations()`); `schema/`, the vector
indexes; `browser/`, saved queries and the style for Neo4j Browser users (the product never runs
them; `tests/test_browser_queries.py` does).
The same files can be pasted into Neo4j Browser (parameters as `:param name => value`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

_ROOT = resources.files(__name__)


@cache
def load(name: str) -> str:
    """The text of `cypher/<name>.cypher`, with comment lines removed."""
    resource = _ROOT.joinpath(*f"{name}.cypher".split("/"))
    if not resource.is_file():
        raise KeyError(f"no Cypher file named {name!r} under cypher/")
    lines = [ln for ln in resource.read_text("utf-8").splitlines() if not ln.lstrip().startswith("//")]
    return "\n".join(lines).strip()


@cache
def variant(name: str, path: str) -> str:
    """The file a server on statement path `path` (kg.core.store.capabilities) runs for `name`: on
    "cypher25", `<name>.cypher25` when that file exists (a Cypher 25 form of the statement); else `name`."""
    if path == "cypher25" and _ROOT.joinpath(*f"{name}.cypher25.cypher".split("/")).is_file():
        return f"{name}.cypher25"
    return name


def statements(name: str) -> list[str]:
    """The `;`-separated statements of a file (schema and migration files hold several)."""
    return [s.strip() for s in load(name).split(";") if s.strip()]


def migrations() -> list[str]:
    """Names of the migration files, in the order they apply."""
    folder = _ROOT.joinpath("migrations")
    return sorted(f"migrations/{p.name[:-7]}" for p in folder.iterdir()
                  if p.name.endswith(".cypher") and not p.name.endswith(".cypher25.cypher"))

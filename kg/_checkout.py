"""The repository's folders ingest/, queries/ and cypher/ as `kg.ingest`, `kg.queries`, `kg.cypher`
when `kg` is imported from a checkout.

An installed package (wheel or `pip install -e .`) maps them by `package-dir` in pyproject.toml;
this finder gives the same mapping to a checkout used as it stands (`python -m bench.x`, pytest
from the repository root in front of an installed wheel), so the checkout never lacks a part.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

FOLDERS = ("ingest", "queries", "cypher")


class _Folders:
    """A meta-path finder (the protocol needs only `find_spec`: importlib.abc's base class would cost
    `import kg`, `kg --help` included, the import of importlib.resources and tempfile)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        parts = fullname.split(".")
        if len(parts) != 2 or parts[0] != "kg" or parts[1] not in FOLDERS:
            return None  # subpackages are found through the package's own __path__
        import importlib.util

        folder = self.root / parts[1]
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


def install(package_dir: Path) -> None:
    """Map the folders beside `package_dir` when it is a checkout's kg/ (not an installed copy)."""
    root = package_dir.parent
    if (package_dir / "ingest").is_dir() or not all((root / f / "__init__.py").is_file() for f in FOLDERS):
        return  # an installed package holds them itself
    if not any(isinstance(f, _Folders) for f in sys.meta_path):
        sys.meta_path.insert(0, _Folders(root))

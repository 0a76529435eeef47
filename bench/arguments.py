"""The command line the benchmarks share: a parser described by the benchmark's docstring and reading
`--data`, the namespace flags of the data-set benchmarks, and the refusal of a data file that is not there."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parser(doc: str, data: Path) -> argparse.ArgumentParser:
    """A benchmark's parser: described by its docstring's first line, reading `--data` (default `data`)."""
    made = argparse.ArgumentParser(description=doc.splitlines()[0])
    made.add_argument("--data", type=Path, default=data)
    return made


def namespaces(parser: argparse.ArgumentParser, prefix: str, one_per: str, keep: str) -> None:
    """`--prefix` (one namespace per `one_per`) and `--keep` (what keeping them means, in `keep`)."""
    parser.add_argument("--prefix", default=prefix, help=f"namespace prefix (one namespace per {one_per})")
    parser.add_argument("--keep", action="store_true", help=keep)


def absent(data: Path, name: str, readme: str) -> bool:
    """True, after saying so on stderr with where to read how to get it, when `data` is not a file."""
    if data.is_file():
        return False
    print(f"no {name} file at {data} (see {readme})", file=sys.stderr)
    return True

"""The `kg` command line (`kg.cli.app`): one module per group of commands, and `terminal` for what
they share. `python -m kg.cli` is the same as `kg`."""

from kg.cli.app import app

__all__ = ["app"]

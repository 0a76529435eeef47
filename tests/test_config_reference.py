"""The configuration reference in docs/ is generated from the settings models and must be current."""

from __future__ import annotations

from kg import config_reference
from kg.core.settings.tree import Settings


def test_the_reference_is_current() -> None:
    assert config_reference.main(["--check"]) == 0, "run `python -m kg.config_reference --write`"


def test_every_key_of_the_tree_is_listed() -> None:
    text = config_reference.render()

    def keys(model: type, path: str) -> list[str]:
        out = []
        for name, field in model.model_fields.items():
            subs = config_reference._submodels(field.annotation)
            if subs and "dict" not in str(field.annotation):
                out += keys(subs[0], f"{path}.{name}" if path else name)
            elif not subs:
                out.append((path, name))
        return out

    for table, key in keys(Settings, ""):
        assert f"## `[{table}]`" in text, table
        section = text.split(f"## `[{table}]`", 1)[1].split("\n## ", 1)[0]
        assert f"| `{key}` |" in section, f"{table}.{key}"


def test_no_machine_path_leaks_into_the_page() -> None:
    text = config_reference.render()
    assert "/root" not in text and "/home/" not in text

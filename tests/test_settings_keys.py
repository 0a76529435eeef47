"""Every settings section refuses unknown keys, and the error says where the key is and what was meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.core.settings.base import Section, UnknownSettingError
from kg.core.settings.tree import Settings

ROOT = Path(__file__).resolve().parent.parent


def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str) -> Settings:
    path = tmp_path / "kg.toml"
    path.write_text(toml, encoding="utf-8")
    monkeypatch.setenv("KG_CONFIG", str(path))
    return Settings()


@pytest.mark.parametrize(("toml", "section", "typo", "meant"), [
    ('[memory.retrieval]\nstrategi = "flat"\n', "[memory.retrieval]", "strategi", "strategy"),
    ("[session]\ngap_minutess = 5\n", "[session]", "gap_minutess", "gap_minutes"),
    ("[memory.retrieval.rerank]\nrerankr = 'llm'\n", "[memory.retrieval.rerank]", "rerankr", "reranker"),
    ('[llm.services.claude]\nprovidr = "anthropic"\n', "[llm.services.claude]", "providr", "provider"),
    ("[memory.entity_deduplication.fuzzy]\nthreshhold = 0.9\n", "[memory.entity_deduplication.fuzzy]",
     "threshhold", "threshold"),
    ("[schedules.index]\nevery = 60\n", "[schedules.index]", "every", "every_s"),
])
def test_a_typo_in_the_file_fails_naming_file_section_key_and_the_closest_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, section: str, typo: str, meant: str) -> None:
    with pytest.raises(UnknownSettingError) as failed:
        load(tmp_path, monkeypatch, toml)
    message = str(failed.value)
    assert str(tmp_path / "kg.toml") in message and section in message, message
    assert f"'{typo}'" in message and f"did you mean '{meant}'" in message, message


def test_a_typo_in_the_environment_names_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KG_CONFIG", raising=False)
    monkeypatch.chdir(ROOT / "tests")  # no kg.toml here
    monkeypatch.setenv("KG_MEMORY__RETRIEVAL__STRATEGI", "flat")
    with pytest.raises(UnknownSettingError, match=r"environment.*\[memory\.retrieval\].*'strategi'.*'strategy'"):
        Settings()


def test_a_wrong_value_is_still_pydantics_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="strategy") as failed:
        load(tmp_path, monkeypatch, '[memory.retrieval]\nstrategy = "magic"\n')
    assert not isinstance(failed.value, UnknownSettingError)


def test_the_example_file_loads_and_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_CONFIG", str(ROOT / "kg.toml.example"))
    settings = Settings()
    assert settings.neo4j.local.heap == "1g" and settings.memory.values.normalize == "casefold"


def every_model(model: type, seen: set[type]) -> set[type]:
    from kg.core.settings.base import _model_in

    if model in seen:
        return seen
    seen.add(model)
    for field in model.model_fields.values():  # type: ignore[attr-defined]
        inner = _model_in(field.annotation)
        if inner is not None:
            every_model(inner, seen)
    return seen


def test_every_section_of_the_tree_forbids_unknown_keys() -> None:
    sections = every_model(Settings, set()) - {Settings}
    assert len(sections) > 20
    assert {s.__name__ for s in sections if not issubclass(s, Section)} == set()
    assert {s.__name__ for s in sections if s.model_config.get("extra") != "forbid"} == set()  # type: ignore[attr-defined]

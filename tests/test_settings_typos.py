"""Every settings section refuses unknown keys: a typo in kg.toml or a KG_* variable fails to load,
naming the file (or variable), the section, the key and the closest valid key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kg.core.config import Settings
from kg.core.settings_base import SettingsError

ROOT = Path(__file__).resolve().parents[1]


def test_typos_in_the_file_name_the_key_and_the_closest_valid_one(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "kg.toml"
    config.write_text('[memory.retrieval]\nstrategi = "flat"\n\n[session]\ngap_minutess = 5\n'
                      '[memory.entity_deduplication.fuzzy]\nthreshhold = 0.9\n')
    monkeypatch.setenv("KG_CONFIG", str(config))
    with pytest.raises(SettingsError) as caught:
        Settings()
    message = str(caught.value)
    assert f"{config}: [memory.retrieval] has no key 'strategi'; did you mean 'strategy'?" in message
    assert f"{config}: [session] has no key 'gap_minutess'; did you mean 'gap_minutes'?" in message
    assert "[memory.entity_deduplication.fuzzy] has no key 'threshhold'" in message


def test_a_typo_in_the_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KG_EMBEDDING__BATCH_SIZ", "8")
    with pytest.raises(SettingsError, match=r"KG_EMBEDDING__BATCH_SIZ\): \[embedding\] has no key 'batch_siz'; "
                                            r"did you mean 'batch_size'\?"):
        Settings()


def test_the_example_file_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_CONFIG", str(ROOT / "kg.toml.example"))
    Settings()


def test_the_cli_says_it_in_words(tmp_path: Path) -> None:
    (tmp_path / "kg.toml").write_text('[memory.retrieval]\nstrategi = "flat"\n')
    done = subprocess.run([sys.executable, "-m", "kg.cli", "status"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "has no key 'strategi'; did you mean 'strategy'?" in done.stderr

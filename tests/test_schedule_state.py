"""Why a schedule runs nothing, said the same way by `kg serve` and `kg jobs kinds` (kg.jobs.sweeps.idle_reason)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kg.core.settings.tree import Schedule, ScheduleSettings, Settings
from kg.jobs import sweeps
from kg.jobs.sweeps import SCHEDULES, idle_reason, runnable


def test_every_default_schedule_runs_and_a_disabled_one_says_so() -> None:
    cfg = ScheduleSettings(index=Schedule(every_s=60, enabled=False))
    assert idle_reason(cfg, "index") == "disabled"
    assert [n for n in SCHEDULES if idle_reason(cfg, n) is not None] == ["index"]
    assert runnable(cfg) == [n for n in SCHEDULES if n != "index"]


def test_a_schedule_without_its_job_kind_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    sweep, _ = sweeps.SWEEPS["summarize"]
    monkeypatch.setitem(sweeps.SWEEPS, "summarize", (sweep, lambda: False))
    assert idle_reason(ScheduleSettings(), "summarize") == "its job kind is not registered"
    assert "summarize" not in runnable(ScheduleSettings())


def test_kg_jobs_kinds_shows_the_state_of_each_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.cli import app

    settings = Settings(schedules=ScheduleSettings(reindex=Schedule(cron="30 2 * * *", enabled=False)))
    monkeypatch.setattr("kg.cli.jobs.load_settings", lambda: settings)
    done = CliRunner().invoke(app, ["jobs", "kinds"])
    assert done.exit_code == 0, done.output
    cells = [[c.strip() for c in line.split("│") if c.strip()] for line in done.output.splitlines()]
    state = {row[0]: row[-1] for row in cells if row and row[0] in SCHEDULES and len(row) == 3}
    assert state == {n: "disabled" if n == "reindex" else "active" for n in SCHEDULES}, done.output

"""Jobs as they cross the public API: one persisted unit of background work and its state.

A job is named by its kind, namespace and target (`job_id`), so enqueueing the same work twice
yields the same job. `pass_outputs` holds what each finished pass produced: a job that crashed
resumes after the last saved pass instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal, Mapping

from pydantic import BaseModel, Field, computed_field

from kg.core.models.values import native_props

# dead: dead-lettered after max_attempts; superseded: later input replaced its target (a session
# renamed or merged by a later message), so there was nothing left to do
JobStatus = Literal["queued", "running", "done", "dead", "superseded"]
JOB_STATUSES: tuple[str, ...] = ("queued", "running", "done", "dead", "superseded")


def job_id(kind: str, namespace: str, target: str) -> str:
    digest = hashlib.sha256("\x1f".join((kind, namespace, target)).encode("utf-8")).hexdigest()[:24]
    return f"job-{digest}"


class Job(BaseModel):
    """A queued job of a namespace: what it does (`kind`) to which `target`, and how far it got."""

    id: str
    namespace: str
    kind: str
    target: str
    status: JobStatus
    attempts: int = 0
    last_error: str | None = None
    enqueued_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    next_attempt_at: datetime | None = None
    lease_until: datetime | None = None
    worker: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    pass_outputs: dict[str, Any] = Field(default_factory=dict)  # "llm": the LLM calls of every attempt

    @computed_field  # type: ignore[prop-decorator]
    @property
    def llm_calls(self) -> int:
        return int((self.pass_outputs.get("llm") or {}).get("llm_calls", 0))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def input_tokens(self) -> int:
        return int((self.pass_outputs.get("llm") or {}).get("input_tokens", 0))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def output_tokens(self) -> int:
        return int((self.pass_outputs.get("llm") or {}).get("output_tokens", 0))

    @classmethod
    def from_node(cls, props: Mapping[str, Any]) -> "Job":
        """From the node's properties: times as Neo4j DateTimes, params and outputs as JSON text."""
        values = native_props(props)
        for key in ("params", "pass_outputs"):
            values[key] = json.loads(values.get(key) or "{}")
        for key in ("llm_calls", "input_tokens", "output_tokens"):
            values.pop(key, None)  # computed from pass_outputs
        values.pop("claim", None)  # the fencing token stays with the worker that holds it
        return cls.model_validate(values)


class RunReport(BaseModel):
    """What one `run_jobs` call did."""

    enqueued: int = 0  # by the sweeps it ran first
    done: list[str] = Field(default_factory=list)  # job ids
    retrying: list[str] = Field(default_factory=list)  # failed, queued again after a backoff
    dead: list[str] = Field(default_factory=list)  # dead-lettered
    lost: list[str] = Field(default_factory=list)  # lease lost to another worker mid-run
    superseded: list[str] = Field(default_factory=list)  # its target was renamed or merged away
    pending: int = 0  # queued or running jobs left when it stopped

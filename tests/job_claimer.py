"""A worker process for `test_jobs.test_claims_are_exclusive_across_processes`.

    python -m tests.job_claimer KIND OUT_FILE GO_FILE

Connects, touches OUT_FILE.ready, waits for GO_FILE, then runs jobs of KIND until none is left,
appending "job_id worker" to OUT_FILE for every handler run.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from kg import load_settings  # kg first: it imports the ingest modules in their order
from kg.core.settings.tree import JobSettings, Settings
from kg.core.store.store import Store
from kg.jobs.kinds import JobKind
from kg.jobs.queue import JobRun
from kg.jobs.worker import Worker

JOBS = JobSettings(max_attempts=3, backoff_initial_s=0.05, lease_s=30, heartbeat_s=5, poll_s=0.1, concurrency=2)


class StoreOnly:
    """The part of `AsyncMemory` a worker and this handler use; no embedder to load."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings


async def main(kind: str, out: Path, go: Path) -> None:
    settings = load_settings()
    store = await Store.connect(settings)
    try:
        with out.open("a") as record:
            async def handler(memory: Any, run: JobRun) -> dict[str, Any]:
                record.write(f"{run.job.id} {worker.name}\n")
                record.flush()
                await asyncio.sleep(0.02)
                return {"by": worker.name}

            worker = Worker(StoreOnly(store, settings), {kind: JobKind(kind, handler, "test")}, settings=JOBS)  # type: ignore[arg-type]
            Path(f"{out}.ready").touch()
            while not go.exists():
                await asyncio.sleep(0.05)
            await worker.drain()
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))

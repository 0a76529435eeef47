"""`kg serve`'s job workers in a child process of lower CPU priority (`[jobs] worker_process`).

A job's work is mostly CPU in Python (the offline extractor and summarizer, clustering, building
rows), and in the API's process it holds the interpreter and the event loop a query needs: with
the workers in the same process, queries under ingest were 3x slower at p95 than idle. In a child
process at `[jobs] worker_nice`, the operating system gives the API and the database the CPU first
and the workers the rest.

The child gets the parent's `Settings` through multiprocessing's pipe (never a command line, so a
password stays out of `ps`) and runs the workers only (`kg.serve.run_workers`). It dies with the
parent (Linux: `PR_SET_PDEATHSIG`, SIGKILL, as if the service was killed as a whole: the job's
lease returns it to the queue), is restarted after a pause if it exits on its own, and on a
graceful stop gets SIGTERM and `[jobs] lease_s` to finish its job in hand.

With `[http] metrics` on, the child's telemetry (its job runs, LLM calls, statements and embedder
calls) comes back to the parent over a pipe (`Relay`) and is reported there as the parent's own,
so the API's `GET /metrics` counts the jobs `kg serve` runs, not only its requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Coroutine

from kg.core.settings.tree import Settings
from kg.core.telemetry import hooks as telemetry
from kg.jobs.worker import wait_or_stop

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
RESTART_PAUSE_S = (1.0, 30.0)  # first pause before a restart, and the cap as it doubles
RELAY_READS = 256  # telemetry reports taken from the child per turn of the parent's loop


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the child outlives a killed parent
            log.warning("worker process: prctl is unavailable; it will not stop with a killed parent")


Work = Callable[[Settings, "str | None"], Coroutine[Any, Any, None]]


class Relay:
    """A `kg.core.telemetry.hooks` observer in the child: each report goes down the pipe to the parent,
    which reports it as its own (`receive`). Names of code and numbers only, as every report."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def _send(self, report: str, *args: object) -> None:
        try:
            self.conn.send((report, args))
        except (OSError, ValueError):  # the parent is gone or stopping: its metrics with it
            telemetry.remove_observer(self)

    def statement(self, name: str, seconds: float) -> None:
        self._send("statement_done", name, seconds)

    def embed(self, kind: str, seconds: float) -> None:
        self._send("embed_done", kind, seconds)

    def llm(self, purpose: str, seconds: float, input_tokens: int, output_tokens: int) -> None:
        self._send("llm_done", purpose, seconds, input_tokens, output_tokens)

    def job(self, kind: str, outcome: str, seconds: float) -> None:
        self._send("job_done", kind, outcome, seconds)


REPORTS: dict[str, Callable[..., None]] = {
    "statement_done": telemetry.statement_done, "embed_done": telemetry.embed_done,
    "llm_done": telemetry.llm_done, "job_done": telemetry.job_done,
}


def receive(conn: Connection) -> None:
    """In the parent, when the pipe is readable: report what the child sent, as the parent's own."""
    try:
        for _ in range(RELAY_READS):  # then back to the loop; the rest at its next turn
            if not conn.poll():
                break
            report, args = conn.recv()
            REPORTS[report](*args)
    except (EOFError, OSError):  # the child exited; its successor gets a new pipe
        asyncio.get_running_loop().remove_reader(conn.fileno())


def _child_main(work: Work, settings: Settings, namespace: str | None, nice: int, level: int,
                relay: Connection | None = None) -> None:
    """The child: lower priority, then `work` (workers only: no API, no sweeps) until SIGTERM."""
    _die_with_parent()
    if nice:
        os.nice(nice)
    if relay is not None:
        telemetry.add_observer(Relay(relay))
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s [worker process]: %(message)s")
    asyncio.run(work(settings, namespace))


class WorkerProcess:
    """The child process running `[jobs] concurrency` workers, supervised by `kg serve`."""

    def __init__(self, work: Work, settings: Settings, namespace: str | None = None) -> None:
        """`work` runs in the child: a module-level coroutine function (it is pickled by name)."""
        self.work = work
        self.settings = settings
        self.namespace = namespace
        self._ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no inherited loop or driver
        self.process: BaseProcess | None = None
        self._relay: Connection | None = None  # the parent's end of the telemetry pipe

    def start(self) -> None:
        level = logging.getLogger().getEffectiveLevel()
        self._close_relay()
        child_end = None
        if self.settings.http.metrics:  # the child's telemetry, reported by this process (`Relay`)
            self._relay, child_end = self._ctx.Pipe(duplex=False)
            asyncio.get_running_loop().add_reader(self._relay.fileno(), receive, self._relay)
        self.process = self._ctx.Process(
            target=_child_main, name="kg-serve-workers", daemon=False,
            args=(self.work, self.settings, self.namespace, self.settings.jobs.worker_nice, level, child_end))
        self.process.start()
        if child_end is not None:
            child_end.close()  # the child holds its own copy
        log.info("job workers in process %s (nice %d)", self.process.pid, self.settings.jobs.worker_nice)

    async def supervise(self, stop: asyncio.Event) -> None:
        """Keep the child running until `stop`; then stop it gracefully."""
        pause = RESTART_PAUSE_S[0]
        self.start()
        try:
            while not stop.is_set():
                await wait_or_stop(stop, 0.5)
                process = self.process
                if stop.is_set() or process is None or process.is_alive():
                    continue
                log.error("job worker process %s exited with %s; restarting in %.0f s", process.pid,
                          process.exitcode, pause)
                await wait_or_stop(stop, pause)
                if not stop.is_set():
                    pause = min(pause * 2, RESTART_PAUSE_S[1])
                    self.start()
        finally:
            await asyncio.shield(asyncio.to_thread(self.stop))
            self._close_relay()

    def _close_relay(self) -> None:
        if self._relay is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self._relay.fileno())
            self._relay.close()
            self._relay = None

    def stop(self) -> None:
        """SIGTERM, then `[jobs] lease_s` for the job in hand, then SIGKILL."""
        process = self.process
        if process is None or not process.is_alive():
            return
        process.terminate()
        process.join(self.settings.jobs.lease_s)
        if process.is_alive():
            log.warning("job worker process %s did not stop within %.0f s; killed", process.pid,
                        self.settings.jobs.lease_s)
            process.kill()
            process.join(10)


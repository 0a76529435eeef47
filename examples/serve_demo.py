"""`kg serve` at work: a session is indexed and summarized by the scheduler, with no manual call.

    python examples/serve_demo.py [--keep]

Starts `kg serve` on the local Neo4j with short schedules (the summary and index sweeps every 3
seconds, a session idle after 6 seconds), ingests a short conversation with `kg ingest`, then
waits until the scheduler's jobs have closed, summarized and indexed it, and prints the summary,
what indexing found, and the jobs that ran. The demo namespace is deleted at the end unless
`--keep` is given. Works with the offline extractor and summarizer (no API key needed); with
ANTHROPIC_API_KEY set, Claude does both.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
SESSION = "support-call"
CONVERSATION = [
    ("user", "Dana", "Hi, I moved to Lisbon last month and I work at Acme Robotics now."),
    ("assistant", None, "Welcome! How can I help with your order?"),
    ("user", "Dana", "Order #A-88231 never arrived. My wife Anna ordered it from Lumen Store."),
    ("assistant", None, "Sorry about that. I can offer a refund or a replacement for order A-88231."),
    ("user", "Dana", "Let's go with the refund."),
    ("assistant", None, "Done: the refund for A-88231 is on its way, within five working days."),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(keep: bool) -> int:
    namespace = f"demo-serve-{int(time.time())}"
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "KG_SCHEDULES__SUMMARIZE__EVERY_S": "3", "KG_SCHEDULES__INDEX__EVERY_S": "3",
           "KG_SESSION__IDLE_MINUTES": "0.1", "KG_JOBS__POLL_S": "0.5", "KG_HTTP__PORT": str(port)}
    log = tempfile.NamedTemporaryFile("w+", prefix="kg-serve-", suffix=".log", delete=False)
    print(f"starting `kg serve` on port {port} (log: {log.name})")
    # --namespace: on a shared database, the demo must not index or summarize anyone else's sessions
    serve = subprocess.Popen([sys.executable, "-m", "kg.cli", "-v", "serve", "--namespace", namespace], cwd=ROOT,
                             env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: healthy(port) or serve.poll() is not None, 180, "kg serve to answer")
        if serve.poll() is not None:
            print(Path(log.name).read_text()[-3000:])
            return 1
        print("kg serve is up: scheduler, workers and HTTP API")

        start = datetime.now(timezone.utc) - timedelta(seconds=len(CONVERSATION))
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as source:
            for i, (role, speaker, text) in enumerate(CONVERSATION):
                source.write(json.dumps({"namespace": namespace, "session_id": SESSION, "role": role,
                                         "speaker": speaker, "text": text,
                                         "ts": (start + timedelta(seconds=i)).isoformat()}) + "\n")
        subprocess.run([sys.executable, "-m", "kg.cli", "ingest", source.name], cwd=ROOT, env=env, check=True)
        print(f"ingested session {SESSION!r} of {namespace!r}; now only waiting for the scheduler...")

        from kg import Memory

        with Memory() as memory:
            def finished() -> bool:
                jobs = memory.jobs(namespace=namespace)
                return {(j.kind, j.status) for j in jobs} >= {("summarize_due", "done"), ("index_session", "done")}

            wait_until(finished, 240, "the session to be summarized and indexed")
            session = memory.session(namespace, SESSION)
            summary = next(s for s in memory.summaries(namespace, SESSION) if s.kind == "session")
            print(f"\nsession {SESSION}: {session.status}, {session.message_count} messages")
            print(f"summary v{summary.version} ({summary.model}, {summary.prompt_version}):\n  {summary.text}")
            for job in memory.jobs(namespace=namespace):
                print(f"job {job.kind:<14} {job.target:<14} {job.status} after {job.attempts} attempt(s)")
                report = job.pass_outputs.get("report")
                if job.kind == "index_session" and report:
                    print(f"  indexed with {report['extractor']}/{report['model']}: {report['entities_created']} "
                          f"entities, {report['facts']} facts, {report['decisions']} decisions, "
                          f"{report['corrections']} corrections")
            for fact in memory.facts(namespace, "Dana"):
                print(f"  fact: Dana {fact.predicate} {fact.object_value}")
            if not keep:
                memory.delete_namespace(namespace)
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()
    print(f"\nkg serve stopped (exit {serve.returncode})" + ("" if not keep else f"; data kept in {namespace!r}"))
    return 0


def healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def wait_until(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {timeout:.0f}s waiting for {what}")
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main("--keep" in sys.argv[1:]))

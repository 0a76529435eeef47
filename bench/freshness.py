"""Write-to-recall lag: from a write's acknowledgement to (a) the turn found by search and (b) its
fact answered by `facts`, at each door (Memory in process, HTTP, MCP over streamable HTTP), with
`kg serve` running its jobs, under `bench.load`'s traffic.

    python -m bench.freshness --json                  # 8 trials a door, under load, idle close 15 s
    python -m bench.freshness --no-load --json        # the same without the traffic

Starts `python -m kg.cli serve` on a free 127.0.0.1 port (its sweeps every `--index-every` s, a
session closing after `--idle-minutes` without a message), and, unless `--no-load`, prefills
`bench-load` as `bench.load` does and runs its open-loop traffic beside the trials: queries at
`--qps` on `bench-load`, messages at `--ingest-rate` to `bench-load-live`. Each trial writes one
message, "I moved to <a new city>.", said by a new speaker into a new session of `bench-fresh`,
then searches for it at once and again until a search returns it (`turn`), and asks `facts(speaker,
"lives_in")` every `--fact-poll` s until it answers the city (`fact`): the session must close by idle
time and be indexed by a job. Each lag runs from the write's acknowledgement to the start of the
call that answered; `first_search` counts the turns the very next search found. Trials start every
`--spacing` s, the doors interleaved. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx

from bench.load import LIVE, free_port, prefill, start_server, stop_server, wait_ready
from bench.load_traffic import Phase, arrivals, load_average, on_schedule, percentile, progress
from kg import AsyncClient, AsyncMemory, load_settings
from kg.client import NotFound

DOORS = ("memory", "http", "mcp")
FRESH = "bench-fresh"
Call = Callable[..., Awaitable[Any]]


class Door:
    """One door's write, search and facts calls, as a client of it makes them."""

    def __init__(self, name: str, write: Call, search: Call, facts: Call) -> None:
        self.name, self.write, self.search, self.facts = name, write, search, facts


def trial_text(token: str) -> tuple[str, str, str]:
    """The speaker, the city and the message of one trial: names nothing else in the store has."""
    speaker, city = f"Tester{token}", f"Portvale{token}"
    return speaker, city, f"I moved to {city}."


async def one_trial(door: Door, token: str, fact_poll: float, give_up: float) -> dict[str, Any]:
    """One trial; an error (after the client's own retries) is kept in the result, not raised."""
    try:
        return await _trial(door, token, fact_poll, give_up)
    except Exception as exc:  # noqa: BLE001 - reported per trial
        return {"door": door.name, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}


async def _trial(door: Door, token: str, fact_poll: float, give_up: float) -> dict[str, Any]:
    speaker, city, text = trial_text(token)
    session = f"fresh-{door.name}-{token}"
    started = time.monotonic()
    await door.write(session, speaker, text)
    ack = time.monotonic()
    out: dict[str, Any] = {"door": door.name, "write_ms": round((ack - started) * 1000, 1)}
    searches = 0
    while time.monotonic() - ack < give_up:
        at = time.monotonic()
        searches += 1
        if text in await door.search(f"where did {speaker} move?"):
            out.update(turn_ms=round((at - ack) * 1000, 1), searches=searches,
                       search_ms=round((time.monotonic() - at) * 1000, 1))
            break
    while time.monotonic() - ack < give_up:
        at = time.monotonic()
        if city in await door.facts(speaker):
            out["fact_s"] = round(at - ack, 2)
            break
        await asyncio.sleep(fact_poll)
    return out


def summary(values: list[float], unit: str) -> dict[str, Any]:
    return {f"p50_{unit}": round(percentile(values, 50), 2), f"p95_{unit}": round(percentile(values, 95), 2),
            f"max_{unit}": round(max(values), 2) if values else None, "n": len(values)}


def report(trials: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in DOORS:
        mine = [t for t in trials if t["door"] == name]
        found = [t for t in mine if "turn_ms" in t]
        out[name] = {
            "trials": len(mine), "errors": [t["error"] for t in mine if "error" in t],
            "write_ack": summary([t["write_ms"] for t in mine if "write_ms" in t], "ms"),
            "turn": {**summary([t["turn_ms"] for t in found], "ms"), "found": len(found),
                     "first_search": sum(t["searches"] == 1 for t in found),
                     "search": summary([t["search_ms"] for t in found], "ms")},
            "fact": {**summary([t["fact_s"] for t in mine if "fact_s" in t], "s"),
                     "answered": sum("fact_s" in t for t in mine)},
        }
    return out


async def traffic(client: httpx.AsyncClient, base: str, qps: float, ingest_rate: float, batch: int,
                  stop: asyncio.Event) -> dict[str, Any]:
    """`bench.load`'s open-loop traffic (queries on `base`, ingest to its `-live` sibling) until `stop`."""
    phase = Phase(max_inflight=64)
    sent = {"messages": 0}
    query, ingest = arrivals(client, phase, base, base + LIVE, random.Random(36), f"fresh-{int(time.time())}",
                             batch, sent)
    until = time.monotonic() + 24 * 3600
    started = time.monotonic()
    tasks = [asyncio.create_task(on_schedule(qps, until, query))]
    if ingest_rate > 0:
        tasks.append(asyncio.create_task(on_schedule(ingest_rate / batch, until, ingest)))
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.gather(*phase.tasks, return_exceptions=True)
    out = phase.report(time.monotonic() - started)
    out["messages_sent"] = sent["messages"]
    return out


async def doors(url: str, key: str, memory: AsyncMemory, stack: Any) -> dict[str, Door]:
    """The three doors, each a client as an agent would hold one."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    def now() -> datetime: return datetime.now(timezone.utc)
    # kg.Client sends a request refused with Retry-After (backpressure) again, as an agent's would
    http = await stack.enter_async_context(AsyncClient(url, api_key=key, timeout=30, retries=10))
    mcp_http = await stack.enter_async_context(httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=30))
    mcp = await stack.enter_async_context(Client(streamable_http_client(f"{url}/mcp", http_client=mcp_http)))

    async def m_write(session: str, speaker: str, text: str) -> None:
        await memory.add_turns(FRESH, session, [{"role": "user", "speaker": speaker, "text": text, "ts": now()}])

    async def m_search(q: str) -> list[str]:
        return [h.turn.text for h in await memory.search_turns(FRESH, q, 5)]

    async def m_facts(subject: str) -> list[str]:
        return [f.object_value for f in await memory.facts(FRESH, subject, "lives_in")]

    async def h_write(session: str, speaker: str, text: str) -> None:
        await http.add_turns(FRESH, session, [{"role": "user", "speaker": speaker, "text": text, "ts": now()}])

    async def h_search(q: str) -> list[str]:
        return [h.turn.text for h in await http.search_turns(FRESH, q, 5)]

    async def h_facts(subject: str) -> list[str]:
        try:
            return [f.object_value for f in await http.facts(FRESH, subject, "lives_in")]
        except NotFound:  # nothing about the subject yet
            return []

    async def tool(name: str, arguments: dict[str, Any]) -> Any:
        """One tool call; one refused by backpressure (HTTP 503/429 under `/mcp`) is sent again
        after a second, as a client honouring Retry-After would."""
        for _ in range(30):
            try:
                result = await mcp.call_tool(name, arguments)
            except MCPError as exc:  # the SDK's word for an HTTP error without a JSON-RPC body: a refusal
                if exc.message != "Server returned an error response":
                    raise
                await asyncio.sleep(1.0)
                continue
            if result.is_error:
                raise RuntimeError(result.content[0].text)
            content = result.structured_content
            return content.get("result", content) if isinstance(content, dict) else content
        raise RuntimeError(f"{name}: refused 30 times")

    async def p_write(session: str, speaker: str, text: str) -> None:
        await tool("add_turns", {"namespace": FRESH, "session_id": session, "turns": [
            {"role": "user", "speaker": speaker, "text": text, "ts": now().isoformat()}]})

    async def p_search(q: str) -> list[str]:
        return [h["turn"]["text"] for h in await tool("search_turns", {"namespace": FRESH, "query": q, "k": 5})]

    async def p_facts(subject: str) -> list[str]:
        try:
            found = await tool("facts_as_of", {"namespace": FRESH, "subject": subject, "predicate": "lives_in"})
        except RuntimeError as exc:
            if "holds no data" in str(exc):
                return []
            raise
        return [f["object_value"] for f in found]

    return {"memory": Door("memory", m_write, m_search, m_facts), "http": Door("http", h_write, h_search, h_facts),
            "mcp": Door("mcp", p_write, p_search, p_facts)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from contextlib import AsyncExitStack

    load_at_start = load_average()
    filled = None if args.no_load else await prefill(args.namespace, args.prefill, False, args.settle_s)
    key = secrets.token_urlsafe(24)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    settings = {"KG_SESSION__IDLE_MINUTES": str(args.idle_minutes), "KG_MEMORY__INDEXING__BACKEND": "offline"}
    log = open(args.server_log, "w+b") if args.server_log else tempfile.TemporaryFile()
    progress(f"starting kg serve on port {port} (sessions close after {args.idle_minutes} min idle, "
             f"sweeps every {args.index_every} s) ...")
    server = start_server(port, {key: [FRESH, args.namespace, args.namespace + LIVE]}, args.index_every, log,
                          extra_env=settings)
    stop = asyncio.Event()
    try:
        await wait_ready(server, url, log)
        async with AsyncExitStack() as stack, AsyncMemory(load_settings()) as memory:
            await memory.delete_namespace(FRESH)
            by_name = await doors(url, key, memory, stack)
            load_client = await stack.enter_async_context(httpx.AsyncClient(headers={"X-API-Key": key}, timeout=30))
            background = None if args.no_load else asyncio.create_task(traffic(
                load_client, f"{url}/v1/namespaces/{args.namespace}", args.qps, args.ingest_rate, args.batch, stop))
            pending = []
            for i in range(args.trials):
                for name in DOORS:
                    token = uuid.uuid4().hex[:8]
                    pending.append(asyncio.create_task(one_trial(by_name[name], token, args.fact_poll, args.give_up)))
                    await asyncio.sleep(args.spacing)
                progress(f"  trial {i + 1} of {args.trials} started at every door")
            trials = await asyncio.gather(*pending)
            stop.set()
            load = await background if background is not None else None
            await memory.delete_namespace(FRESH)
    finally:
        stop.set()
        progress("stopping the server ...")
        stop_server(server)
        log.close()
    cfg = load_settings()
    return {
        "target": "kg serve (HTTP, MCP, workers, scheduler) on 127.0.0.1; Memory in this process",
        "load_average": {"start": load_at_start, "end": load_average()},
        "settings": {"session.idle_minutes": args.idle_minutes, "schedules.index.every_s": args.index_every,
                     "schedules.summarize.every_s": args.index_every, "jobs.poll_s": cfg.jobs.poll_s,
                     "jobs.concurrency": cfg.jobs.concurrency, "memory.indexing.backend": "offline"},
        "under_load": None if args.no_load else {"qps": args.qps, "ingest_messages_per_s": args.ingest_rate,
                                                 "prefill": filled, "traffic": load},
        "doors": report(list(trials)),
        "trials": list(trials),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8, help="Trials at each door.")
    parser.add_argument("--spacing", type=float, default=2.0, help="Seconds between two trials' writes.")
    parser.add_argument("--idle-minutes", type=float, default=0.25, help="The server's [session] idle_minutes.")
    parser.add_argument("--index-every", type=float, default=5.0,
                        help="The server's [schedules] index and summarize every_s.")
    parser.add_argument("--fact-poll", type=float, default=0.5, help="Seconds between two `facts` calls of a trial.")
    parser.add_argument("--give-up", type=float, default=300.0, help="A trial waits at most this long for each answer.")
    parser.add_argument("--no-load", action="store_true", help="No traffic beside the trials.")
    parser.add_argument("--qps", type=float, default=4, help="bench.load's query arrivals per second.")
    parser.add_argument("--ingest-rate", type=float, default=20, help="bench.load's messages per second.")
    parser.add_argument("--batch", type=int, default=10, help="Messages per ingest request.")
    parser.add_argument("--prefill", type=int, default=2000, help="Turns in bench.load's namespace (kept between runs).")
    parser.add_argument("--namespace", default="bench-load", help="bench.load's namespace, read by the traffic.")
    parser.add_argument("--settle-s", type=float, default=120.0, help="How long the prefill waits for its jobs.")
    parser.add_argument("--server-log", type=Path, help="Keep the server's log in this file.")
    parser.add_argument("--json", action="store_true", help="Print only the JSON result.")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.idle_minutes <= 0 or args.index_every <= 0:
        parser.error("--trials >= 1, --idle-minutes > 0, --index-every > 0")
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, d in result["doors"].items():
            print(f"{name:7} turn p50 {d['turn']['p50_ms']} ms p95 {d['turn']['p95_ms']} ms max {d['turn']['max_ms']} ms "
                  f"(first search {d['turn']['first_search']}/{d['trials']}); fact p50 {d['fact']['p50_s']} s "
                  f"p95 {d['fact']['p95_s']} s max {d['fact']['max_s']} s ({d['fact']['answered']}/{d['trials']})")
    complete = all(d["turn"]["found"] == d["trials"] == d["fact"]["answered"] for d in result["doors"].values())
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())

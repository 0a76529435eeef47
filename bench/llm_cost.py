"""LLM cost of one session: calls and tokens to index and summarize it, as JSON.

    python -m bench.llm_cost [--json] [--keep]

Runs the real write path (AsyncMemory: summaries, indexing, dedup, the LLM hooks) on the managed
Neo4j against the local fake LLM endpoint (`tests.fake_llm`, the one the tests use: a scripted
Anthropic Messages API), whose answers are realistic in size: an extraction of a dozen items
and a summary of a few sentences, usage estimated from the request and answer text (4 characters
per token). Three sessions, each in a fresh namespace that already knows "Tom Becker" and
"Tom Baker", so the session's bare "Tom" raises an entity adjudication:
- closed_100: 100 turns (~4.5k tokens, as the chunker estimates them) added, closed (summarized), then indexed;
- live_100: the same turns arriving 20 at a time, the due summaries run after each batch
  (`[session] summarize_every_messages`, as `kg serve` does), then closed and indexed;
- closed_400: 400 turns (~18k tokens), closed and indexed;
- closed_100_three_pass: closed_100 with `[memory.indexing] passes = 3`: the session call (pass 1),
  then the signals (pass 2, the transcript again) and the quality (pass 3, passes 1 and 2 only).
`meter_matches_endpoint`: for every scenario, the calls and tokens the usage meter recorded (and
the session node summed) equal the requests the endpoint received and the usage it answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from kg.core.llm.usage import metering
from kg.core.prompts.extraction import ChunkTurn
from kg.core.settings.tree import Settings
from kg.ingest.extraction.chunking import turn_tokens
from kg.memory import AsyncMemory
from tests.fake_llm import FakeLLM, Reply, SeenRequest, estimate_tokens

MODEL = "claude-haiku-4-5"
LIMITS = {"closed_100": 2, "live_100": 4, "closed_400": 6, "closed_100_three_pass": 4}  # calls, the issues' promise
_TOPICS = ["the Lisbon office move", "the quarterly budget", "the Atlas release", "hiring a designer",
           "the customer churn report", "the on-call rota", "the data warehouse migration", "travel to Porto"]


class Endpoint:
    """The fake's answers, by the tool the request asks for, and what they said they cost."""

    def __init__(self) -> None:
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def __call__(self, request: SeenRequest) -> Reply:
        body = request.body or {}
        tool = ((body.get("tools") or [{}])[0]).get("name", "")
        ids = re.findall(r'<turn id=\\"([^"\\]+)\\"', request.text()) or ["t0"]
        answer = {"SessionAnswer": lambda: _session_answer(ids), "SummaryDraft": _summary,
                  "Rulings": lambda: _rulings(request), "Contradiction": lambda: {"contradicts": True, "reason": "one"},
                  "SignalsAnswer": lambda: _signals(ids), "QualityAnswer": lambda: _quality(request),
                  }.get(tool, lambda: {})()
        usage = {"input_tokens": estimate_tokens(request.text()), "output_tokens": estimate_tokens(json.dumps(answer))}
        self.calls += 1
        self.input_tokens += usage["input_tokens"]
        self.output_tokens += usage["output_tokens"]
        return Reply(body={
            "id": f"msg_{self.calls:05d}", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": answer}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": usage})


def _summary() -> dict[str, Any]:
    return {"text": "Dana and the assistant went through " + ", ".join(_TOPICS[:5]) + ". Tom will own the budget "
            "review; Dana decided to ship Atlas on Friday and asked for the churn report by Monday. The Porto trip "
            "and the designer hire were left open.",
            "topics": _TOPICS[:6], "entities": ["Dana", "Tom", "Atlas", "Lisbon", "Porto"],
            "primary_intent": "plan the next two weeks", "outcome": "partial_success",
            "decisions": ["Ship Atlas on Friday.", "Tom owns the budget review."], "complexity": 0.6, "quality": 0.8}


def _session_answer(ids: list[str]) -> dict[str, Any]:
    first, last = ids[0], ids[-1]
    ent = [("Dana", "person"), ("Tom", "person"), ("Atlas", "product"), ("Lisbon", "place"), ("Porto", "place"),
           ("Acme Robotics", "organization")]
    return {
        "entities": [{"name": n, "type": t, "evidence_turn_ids": [first]} for n, t in ent],
        "facts": [{"subject": "Dana", "predicate": "works_at", "object": "Acme Robotics", "evidence_turn_ids": [first],
                   "quote": "I work at Acme Robotics"},
                  {"subject": "Dana", "predicate": "lives_in", "object": "Lisbon", "evidence_turn_ids": [first]},
                  {"subject": "Tom", "predicate": "owns", "object": "the budget review", "evidence_turn_ids": [last]}],
        "relationships": [{"from": "Dana", "relation": "works_with", "to": "Tom", "evidence_turn_ids": [first]}],
        "decisions": [{"text": "Ship Atlas on Friday.", "evidence_turn_ids": [last]}],
        "summary": _summary(),
    }


def _cite(text: str, turn_id: str) -> dict[str, str]:
    return {"quote": text[:60], "text": text, "turn_id": turn_id}


def _signals(ids: list[str]) -> dict[str, Any]:
    """Pass 2: a dozen signals, as a real session of this size gives."""
    at = [ids[min(i, len(ids) - 1)] for i in (0, 10, 24, 40, 58, 76, 98)]
    return {
        "decisions": [{**_cite("Ship Atlas on Friday.", at[6]), "rationale": "the release was ready"},
                      {**_cite("Tom owns the budget review.", at[3]), "rationale": "he asked for it"}],
        "corrections": [_cite("The churn report is due Monday, not Friday.", at[4])],
        "frustration_signals": [_cite("Dana asked twice for a plan by Friday.", at[2])],
        "repeated_instructions": [_cite("A plan by Friday, asked again.", at[2]),
                                  _cite("A plan by Friday, asked a third time.", at[5])],
        "rules_expressed": [_cite("Every plan names an owner and a date.", at[1])],
        "new_knowledge": [_cite("Dana works at Acme Robotics.", at[0]), _cite("The office moves to Lisbon.", at[1]),
                          _cite("Atlas ships on Friday.", at[6])],
    }


def _quality(request: SeenRequest) -> dict[str, Any]:
    """Pass 3: cites the turns pass 2 cited (it does not see the transcript)."""
    cited = re.findall(r'\\"turn_id\\":\s*\\"([^"\\]+)\\"', request.text()) or ["t0"]
    return {"what_worked": [_cite("Every topic got an owner and a date.", cited[0])],
            "what_failed": [_cite("Dana had to ask for the plan again.", cited[-1])], "quality": 0.7}


def _rulings(request: SeenRequest) -> dict[str, Any]:
    n = len(re.findall(r"Question \d+\.", request.text()))
    return {"answers": [{"question": q, "candidate": None} for q in range(1, n + 1)]}


def _turns(n: int, start: datetime, seed: int) -> list[dict[str, Any]]:
    """Short chat turns (~85 characters): with the per-turn wrapper, 100 of them are ~4.5k tokens."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        topic = _TOPICS[(i // 12) % len(_TOPICS)]
        if i % 2 == 0:
            text = f"Tom says {topic} looks {rng.choice(['better', 'worse'])} in week {i // 2 + 1}. A plan by Friday?"
            out.append({"role": "user", "speaker": "Dana", "text": text, "ts": start + timedelta(seconds=10 * i)})
        else:
            text = f"Sure. For {topic}: check open items, agree on an owner and a date; I'll draft it."
            out.append({"role": "assistant", "speaker": "Assistant", "text": text,
                        "ts": start + timedelta(seconds=10 * i)})
    return out


async def _known_people(memory: AsyncMemory, ns: str, start: datetime) -> None:
    """The namespace already knows Tom Becker and Tom Baker (written without the LLM)."""
    from kg.ingest.dedup import Mention
    from kg.ingest.dedup.neo4j_resolver import GraphResolver

    resolver = GraphResolver(memory.settings.memory.entity_deduplication, memory.embedder)
    await resolver.resolve(memory.store, ns, [Mention("Tom Becker", "person"), Mention("Tom Baker", "person")])


async def _scenario(memory: AsyncMemory, endpoint: Endpoint, name: str, turns: int, live: bool) -> dict[str, Any]:
    ns = f"bench-llmcost-{name}-{uuid.uuid4().hex[:8]}"
    now = datetime.now(timezone.utc)
    start = now - timedelta(seconds=10 * turns + 5) if live else now - timedelta(days=1)
    await _known_people(memory, ns, start)
    all_turns = _turns(turns, start, seed=turns)
    before = (endpoint.calls, endpoint.input_tokens, endpoint.output_tokens)
    with metering() as meter:
        if live:
            for at in range(0, turns, 20):
                await memory.add_turns(ns, "s1", all_turns[at:at + 20])
                await memory.summarize_due(ns, now=start + timedelta(seconds=10 * (at + 20)))
        else:
            await memory.add_turns(ns, "s1", all_turns)
        await memory.close_session(ns, "s1")
        report = await memory.index_session(ns, "s1")
    got = (endpoint.calls - before[0], endpoint.input_tokens - before[1], endpoint.output_tokens - before[2])
    session = await memory.session(ns, "s1")
    purposes: dict[str, int] = {}
    for c in meter.calls:
        purposes[c.purpose] = purposes.get(c.purpose, 0) + 1
    result = {
        "calls": meter.llm_calls, "input_tokens": meter.input_tokens, "output_tokens": meter.output_tokens,
        "by_purpose": purposes, "endpoint": {"calls": got[0], "input_tokens": got[1], "output_tokens": got[2]},
        "session_node": {"llm_calls": session.llm_calls, "input_tokens": session.input_tokens,
                         "output_tokens": session.output_tokens} if session else None,
        "index_report": {"llm_calls": report.llm_calls, "input_tokens": report.input_tokens,
                         "output_tokens": report.output_tokens, "chunks": report.chunks,
                         "entities_created": report.entities_created},
        "session_tokens_est": sum(turn_tokens(ChunkTurn(id=str(i), idx=i, text=t["text"], speaker=t["speaker"]))
                                  for i, t in enumerate(all_turns)),
    }
    result["matches"] = (got == (meter.llm_calls, meter.input_tokens, meter.output_tokens)
                         and session is not None and (session.llm_calls, session.input_tokens, session.output_tokens) == got)
    result["_ns"] = ns
    return result


async def run(keep: bool = False, only: list[str] | None = None) -> dict[str, Any]:
    endpoint = Endpoint()
    with FakeLLM(fallback=endpoint) as fake:
        service = {"provider": "anthropic", "model": MODEL, "base_url": fake.url, "api_key": "sk-fake-bench-key-0000",
                   "timeout_s": 30.0, "max_retries": 0, "transport_retries": 0}
        out: dict[str, Any] = {}
        for passes, scenarios in ((1, (("closed_100", 100, False), ("live_100", 100, True), ("closed_400", 400, False))),
                                  (3, (("closed_100_three_pass", 100, False),))):
            wanted = [s for s in scenarios if only is None or s[0] in only]
            if not wanted:
                continue
            settings = Settings(llm={"services": {"fake": service}},
                                memory={"indexing": {"backend": "fake", "passes": passes}})
            async with AsyncMemory(settings) as memory:
                for name, turns, live in wanted:
                    out[name] = await _scenario(memory, endpoint, name, turns, live)
                    print(f"{name}: {out[name]['calls']} calls {out[name]['by_purpose']}", file=sys.stderr)
                for name, _, _ in wanted:
                    ns = out[name].pop("_ns")
                    if not keep:
                        await memory.delete_namespace(ns)
    names = list(out)
    out["meter_matches_endpoint"] = all(out[n].pop("matches") for n in names)
    out["within_limits"] = {n: out[n]["calls"] <= LIMITS[n] for n in names}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    parser.add_argument("--keep", action="store_true", help="keep the namespaces")
    parser.add_argument("--only", nargs="*", choices=sorted(LIMITS), help="run only these scenarios")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.keep, args.only))
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()

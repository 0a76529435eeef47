"""A Strands agent whose session and memory tool are kg-memory (offline: the model is a scripted
Strands `Model` that searches the memory when asked a question). Run from the checkout with the extra
installed (pip install -e '.[strands]', in a venv without the server extra: Strands pins mcp<2.2):
python examples/strands_agent.py

`KgSessionManager` keeps the agent's messages as a kg session, so a new agent on "monday" goes on
where the last one stopped; `memory_tool` searches the other sessions.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

from sensor_chat import CHAT, main, said  # the frame the examples share (sensor_chat.py)
from strands import Agent
from strands.models.model import Model

from kg import Memory
from kg.integrations.strands import KgSessionManager, memory_tool


class MemorySearcher(Model):
    """Stands in for an LLM: a question calls `search_memory`, a tool result is quoted, else noted."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        last = messages[-1]["content"][-1]
        yield {"messageStart": {"role": "assistant"}}
        if "text" in last and last["text"].endswith("?"):
            use = {"toolUseId": f"t{len(messages)}", "name": "search_memory"}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"query": last["text"]})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        found = json.loads(last["toolResult"]["content"][0]["text"]) if "toolResult" in last else None
        text = f"From memory: {found[0] if found else 'nothing'}" if found is not None else \
            f"Noted ({len(messages)} messages in this session)."
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def run(memory: Memory, namespace: str) -> list[str]:
    lines = []
    for session, prompt in CHAT:
        agent = Agent(model=MemorySearcher(), callback_handler=None,  # a new agent each time: the session is in kg
                      session_manager=KgSessionManager(session, memory, namespace),
                      tools=[memory_tool(memory, namespace, k=1, session_id=session)])
        lines.append(said(prompt, str(agent(prompt)).strip(), session))
    return lines


if __name__ == "__main__":
    main(run, "example-strands")

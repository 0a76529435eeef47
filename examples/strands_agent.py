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


class OfflineModel(Model):
    """A Strands `Model` without a network or a configuration: a subclass's `stream` yields `text_reply`
    or `tool_call` (tests/test_integration_strands.py scripts one too)."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def tool_call(use_id: str, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of an answer that calls the tool `name`."""
    use = {"toolUseId": use_id, "name": name}
    return [{"messageStart": {"role": "assistant"}},
            {"contentBlockStart": {"start": {"toolUse": use}}},
            {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}},
            {"contentBlockStop": {}},
            {"messageStop": {"stopReason": "tool_use"}}]


def text_reply(text: str) -> list[dict[str, Any]]:
    """The events of an answer that says `text`."""
    return [{"messageStart": {"role": "assistant"}},
            {"contentBlockStart": {"start": {}}},
            {"contentBlockDelta": {"delta": {"text": text}}},
            {"contentBlockStop": {}},
            {"messageStop": {"stopReason": "end_turn"}}]


class MemorySearcher(OfflineModel):
    """Stands in for an LLM: a question calls `search_memory`, a tool result is quoted, else noted."""

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        last = messages[-1]["content"][-1]
        if "text" in last and last["text"].endswith("?"):
            for event in tool_call(f"t{len(messages)}", "search_memory", {"query": last["text"]}):
                yield event
            return
        found = json.loads(last["toolResult"]["content"][0]["text"]) if "toolResult" in last else None
        text = f"From memory: {found[0] if found else 'nothing'}" if found is not None else \
            f"Noted ({len(messages)} messages in this session)."
        for event in text_reply(text):
            yield event


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

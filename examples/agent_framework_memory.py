"""A Microsoft Agent Framework agent with kg-memory as its history and context providers (offline: the
chat client is a scripted `BaseChatClient` that answers from the instructions and history it is sent).
Run from the checkout with the extra installed (pip install -e '.[agent-framework]'):
python examples/agent_framework_memory.py

`KgHistoryProvider` keeps each agent session's messages as a kg session; `KgContextProvider` adds
the best turns of the user's other sessions to the instructions before each run.
"""

from __future__ import annotations

from typing import Any

from agent_framework import Agent, BaseChatClient, ChatResponse, Message
from sensor_chat import CHAT, main, said  # the frame the examples share (sensor_chat.py)

from kg import Memory
from kg.integrations.agent_framework import KgContextProvider, KgHistoryProvider


class MemoryReader(BaseChatClient[Any]):
    """Stands in for an LLM: quotes the first line the context provider added, else counts the history."""

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        system = "\n".join(m.text for m in messages if m.role == "system")
        instructions = f"{options.get('instructions') or ''}\n{system}"
        recalled = [line[2:] for line in instructions.splitlines() if line.startswith("- ")]
        text = f"From memory: {recalled[0]}" if recalled else f"Noted ({len(messages)} messages so far)."
        return ChatResponse(messages=[Message(role="assistant", contents=[text])])


async def run(memory: Memory, namespace: str) -> list[str]:
    agent = Agent(MemoryReader(), "Be brief.", context_providers=[KgHistoryProvider(memory, namespace),
                                                                  KgContextProvider(memory, namespace, k=1)])
    lines = []
    for session_id, text in CHAT:
        reply = await agent.run(text, session=agent.create_session(session_id=session_id))
        lines.append(said(text, reply.text, session_id))
    return lines


if __name__ == "__main__":
    main(run, "example-agent-framework")

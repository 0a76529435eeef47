"""PydanticAI's message history in and out of the memory, and a memory tool
(`pip install 'kg-memory[pydantic-ai]'`).

    history = KgMessageHistory(memory, "acme", session_id="chat-1")
    agent = Agent(model, tools=[memory_tool(memory, "acme")])
    result = await agent.run(prompt, message_history=await history.amessages())
    await history.aadd(result.new_messages())

`KgMessageHistory` keeps an agent's messages as the turns of one kg session: each `ModelMessage` one
turn (a request with a user prompt -> user, with tool returns only -> tool, with a system prompt only
-> system; a response -> assistant), its text what the memory reads (prompts, texts, `tool args`, tool
returns), PydanticAI's own JSON of it (`ModelMessagesTypeAdapter`) kept verbatim, so `messages`
gives back the same messages, tool calls, usage and times included. `clear` erases the session.

`memory_tool(memory, namespace)` is a `Tool` the model can call, `search_memory(query)`: the turns the
memory's retriever ranks best (`search_turns`), one line each with date and speaker; with `session_id`,
the agent's own session is left out (its turns are in the message history already).

`memory` is a `Memory` (sync and async calls) or an `AsyncMemory` (async calls). See docs/pydantic-ai.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kg.core.extras import require

require("pydantic-ai", "pydantic_ai")

from pydantic_ai import Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from kg.core.models.turns import Role, Turn
from kg.integrations.conversation import Entry, History, MemoryCalls, afound_elsewhere, readable

if TYPE_CHECKING:
    from kg.memory import AsyncMemory, Memory


class KgMessageHistory(History[ModelMessage]):
    """An agent's message history as one kg session (see the module's docstring): `messages`,
    `add` and `clear`, and `amessages`, `aadd` and `aclear`."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, session_id: str) -> None:
        super().__init__(memory, namespace, session_id, _entry, _message)


def _entry(message: ModelMessage) -> Entry:
    texts: list[str] = []
    for part in message.parts:
        if isinstance(part, (SystemPromptPart, TextPart)):
            texts.append(part.content)
        elif isinstance(part, UserPromptPart):
            texts.extend([part.content] if isinstance(part.content, str) else
                         [c for c in part.content if isinstance(c, str)])
        elif isinstance(part, ToolCallPart):
            texts.append(f"{part.tool_name} {part.args_as_json_str()}")
        elif isinstance(part, ToolReturnPart):
            texts.append(part.model_response_str())
        elif isinstance(part, RetryPromptPart):
            texts.append(part.model_response())
    verbatim = ModelMessagesTypeAdapter.dump_json([message]).decode()
    return Entry(_role(message), readable(*texts, fallback=f"[{message.kind}]"), verbatim)


def _role(message: ModelMessage) -> Role:
    if isinstance(message, ModelResponse):
        return "assistant"
    kinds = {type(p) for p in message.parts}
    if UserPromptPart in kinds or not kinds:
        return "user"
    return "system" if kinds == {SystemPromptPart} else "tool"


def _message(turn: Turn) -> ModelMessage:
    """The message as it was added; a turn written by another door (no verbatim) as its role's message."""
    if turn.verbatim is not None:
        return ModelMessagesTypeAdapter.validate_python(json.loads(turn.verbatim))[0]
    if turn.role == "user":
        return ModelRequest(parts=[UserPromptPart(turn.text, timestamp=turn.ts)])
    if turn.role == "system":
        return ModelRequest(parts=[SystemPromptPart(turn.text, timestamp=turn.ts)])
    return ModelResponse(parts=[TextPart(turn.text)], timestamp=turn.ts)  # a tool's text, unpaired: the model's


def memory_tool(memory: Memory | AsyncMemory, namespace: str, k: int = 5, session_id: str | None = None,
                name: str = "search_memory") -> Tool[None]:
    """A tool that searches the memory of `namespace` (see the module's docstring); with `session_id`,
    that session's own turns (already the agent's message history) are left out."""
    calls = MemoryCalls(memory)

    async def search_memory(query: str) -> list[str]:
        """Search earlier conversations for what was said about `query`; one line per message found,
        with its date and who said it."""
        return await afound_elsewhere(calls, namespace, query, k, session_id)

    return Tool(search_memory, name=name, takes_ctx=False)


__all__ = ["KgMessageHistory", "memory_tool"]

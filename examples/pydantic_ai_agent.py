"""A PydanticAI agent whose message history and memory tool are kg-memory (offline: the model is
PydanticAI's `FunctionModel` with a small function that calls the tool and answers from its result).
Run from the checkout with the extra installed (pip install -e '.[pydantic-ai]'):
python examples/pydantic_ai_agent.py

Each run loads the session's messages from kg (`KgMessageHistory`) and stores the new ones; the
`search_memory` tool searches every earlier session.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sensor_chat import CHAT, main, said  # the frame the examples share (sensor_chat.py)

from kg import Memory
from kg.integrations.pydantic_ai import KgMessageHistory, memory_tool


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for an LLM: a question searches the memory, a statement is acknowledged."""
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse(parts=[TextPart(f"From memory: {last.content[0] if last.content else 'nothing'}")])
    if isinstance(last, UserPromptPart) and str(last.content).endswith("?"):
        return ModelResponse(parts=[ToolCallPart("search_memory", {"query": str(last.content)})])
    return ModelResponse(parts=[TextPart(f"Noted ({len(messages)} messages of history).")])


def run(memory: Memory, namespace: str) -> list[str]:
    agent = Agent(FunctionModel(model), tools=[memory_tool(memory, namespace, k=1)])
    lines = []
    for session, prompt in CHAT:
        history = KgMessageHistory(memory, namespace, session)
        result = agent.run_sync(prompt, message_history=history.messages())
        history.add(result.new_messages())
        lines.append(said(prompt, result.output, session))
    friday = KgMessageHistory(memory, namespace, "friday").messages()
    lines.append(f"friday's history: {[type(m).__name__ for m in friday]}")
    return lines


if __name__ == "__main__":
    main(run, "example-pydantic-ai")

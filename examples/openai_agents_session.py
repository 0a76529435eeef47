"""An OpenAI Agents SDK agent whose session is kg-memory (offline: the model is a scripted `Model`
that calls a tool once and otherwise answers from the history it is given). Run from the checkout
with the extra installed (pip install -e '.[openai-agents]'): python examples/openai_agents_session.py

`KgSession` keeps the session's items (messages, tool calls, tool outputs) as the turns of a kg
session: a second run, or another process, continues the conversation.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from sensor_chat import main, said  # the frame the examples share (sensor_chat.py)

from kg import Memory
from kg.integrations.openai_agents import KgSession


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"18C and sunny in {city}"


class HistoryEcho(Model):
    """Stands in for an LLM: asked about the weather, calls the tool; otherwise says what the user said first."""

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        last = input[-1]
        if last.get("type") == "function_call_output":
            text = f"The tool says: {last['output']}"
        elif "weather" in str(last.get("content", "")).lower():
            call = ResponseFunctionToolCall(id="fc_1", call_id="call_1", type="function_call", name="weather",
                                            arguments='{"city": "Paris"}')
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        else:
            text = f"Earlier you said: {input[0]['content']!r} ({len(input)} items of history)"
        message = ResponseOutputMessage(id="msg_1", role="assistant", status="completed", type="message",
                                        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


async def run(memory: Memory, namespace: str) -> list[str]:
    agent = Agent(name="assistant", instructions="Be brief.", model=HistoryEcho(), tools=[weather])
    lines = []
    for question in ["We picked TimescaleDB for the sensor data.", "What's the weather in Paris?",
                     "What did I tell you first?"]:
        session = KgSession("chat-1", memory, namespace)  # a new object each run: the history is in kg
        result = await Runner.run(agent, question, session=session, run_config=RunConfig(tracing_disabled=True))
        lines.append(said(question, result.final_output))
    items = await KgSession("chat-1", memory, namespace).get_items()
    kinds = ", ".join(i.get("type", i.get("role", "?")) for i in items)
    lines.append(f"session chat-1 holds {len(items)} items: {kinds}")
    return lines


if __name__ == "__main__":
    main(run, "example-openai-agents")

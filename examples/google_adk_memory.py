"""A Google ADK agent with kg-memory as its memory service (offline: the model is a scripted `BaseLlm`
that answers from the memories ADK's `preload_memory` tool puts in its request). Run from the checkout
with the extra installed (pip install -e '.[google-adk]'): python examples/google_adk_memory.py

After the first session, `add_session_to_memory` stores its events as kg turns; in a second session
`preload_memory` asks `KgMemoryService.search_memory` and the model sees the earlier conversation.
"""

from __future__ import annotations

import re
from typing import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import preload_memory
from google.genai import types
from sensor_chat import main, said  # the frame the examples share (sensor_chat.py)

from kg import Memory
from kg.integrations.google_adk import KgMemoryService


class MemoryReader(BaseLlm):
    """Stands in for an LLM: quotes the first past conversation line it was given, if any."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        text = "\n".join(p.text for c in llm_request.contents for p in (c.parts or []) if p.text)
        found = re.search(r"<PAST_CONVERSATIONS>\n(?:Time: .*\n)?(.*)\n", text)
        answer = f"From memory: {found.group(1)}" if found else "Noted."
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=answer)]))


async def run(memory: Memory, namespace: str) -> list[str]:
    sessions = InMemorySessionService()
    service = KgMemoryService(memory, k=1, namespace_of=lambda app, user: f"{namespace}.{user}")
    agent = LlmAgent(name="helper", model=MemoryReader(model="offline"), tools=[preload_memory])
    runner = Runner(agent=agent, app_name="shop", session_service=sessions, memory_service=service)
    lines = []
    for question in ["We picked TimescaleDB for the sensor data.", "Which database did we pick for the sensors?"]:
        session = await sessions.create_session(app_name="shop", user_id="maya")
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for event in runner.run_async(user_id="maya", session_id=session.id, new_message=message):
            if event.content and event.content.parts and event.author == "helper":
                lines.append(said(question, event.content.parts[0].text))
        done = await sessions.get_session(app_name="shop", user_id="maya", session_id=session.id)
        await service.add_session_to_memory(done)  # what a session leaves behind, in kg
    return lines


if __name__ == "__main__":
    main(run, "example-adk", clean="example-adk.maya")

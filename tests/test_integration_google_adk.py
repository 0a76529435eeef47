"""The Google ADK door: ADK's own `Runner`, `LlmAgent`, `InMemorySessionService` and
`preload_memory` tool, with a scripted `BaseLlm` (no network), remembering across sessions through
`KgMemoryService` on the real Neo4j."""

from __future__ import annotations

from typing import Any, AsyncGenerator

import pytest

pytest.importorskip("google.adk", reason="the google-adk extra is not installed")

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import preload_memory
from google.genai import types

from kg import AsyncMemory
from kg.integrations.google_adk import KgMemoryService

APP = "shop"


class ScriptedLlm(BaseLlm):
    """Answers from a script and keeps the text of every request it was sent."""

    script: list[str]
    requests: list[str] = []

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append("\n".join(p.text for c in llm_request.contents for p in (c.parts or []) if p.text))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.script.pop(0))]))


async def say(runner: Runner, user: str, session_id: str, text: str) -> list[Any]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [e async for e in runner.run_async(user_id=user, session_id=session_id, new_message=message)]


async def test_an_agent_recalls_an_earlier_session(memory: AsyncMemory, namespace: str) -> None:
    llm = ScriptedLlm(model="scripted", script=["Noted.", "You picked TimescaleDB."])
    agent = LlmAgent(name="helper", model=llm, instruction="Be brief.", tools=[preload_memory])
    sessions = InMemorySessionService()
    service = KgMemoryService(memory, namespace_of=lambda app, user: f"{namespace}.{app}.{user}")
    runner = Runner(agent=agent, app_name=APP, session_service=sessions, memory_service=service)
    ns = f"{namespace}.{APP}.maya"
    try:
        first = await sessions.create_session(app_name=APP, user_id="maya")
        await say(runner, "maya", first.id, "We picked TimescaleDB for the sensor data.")
        first = await sessions.get_session(app_name=APP, user_id="maya", session_id=first.id)
        await service.add_session_to_memory(first)
        await service.add_session_to_memory(first)  # again: nothing new
        turns = await memory.turns(ns, first.id)
        assert [(t.role, t.speaker, t.text) for t in turns] == [
            ("user", None, "We picked TimescaleDB for the sensor data."), ("assistant", "helper", "Noted.")]
        assert [t.external_id for t in turns] == [e.id for e in first.events]

        second = await sessions.create_session(app_name=APP, user_id="maya")
        await say(runner, "maya", second.id, "Which database did we pick?")
        assert "We picked TimescaleDB for the sensor data." in llm.requests[-1]  # preloaded from kg
        assert "<PAST_CONVERSATIONS>" in llm.requests[-1]

        found = await service.search_memory(app_name=APP, user_id="maya", query="sensor database")
        assert found.memories[0].content.parts[0].text == "We picked TimescaleDB for the sensor data."
        assert found.memories[0].author == "user" and found.memories[0].custom_metadata["session_id"] == first.id
        other = await service.search_memory(app_name=APP, user_id="li", query="sensor database")
        assert other.memories == []  # another user's namespace
    finally:
        await memory.delete_namespace(ns)


async def test_events_added_without_a_session_join_the_current_one(memory: AsyncMemory, namespace: str) -> None:
    from google.adk.events.event import Event

    service = KgMemoryService(memory, namespace_of=lambda app, user: namespace)
    events = [Event(author="user", timestamp=1_700_000_000.0,
                    content=types.Content(role="user", parts=[types.Part(text="Lisbon in May")])),
              Event(author="user", timestamp=1_700_000_001.0, content=types.Content(role="user", parts=[]))]
    await service.add_events_to_memory(app_name=APP, user_id="u", events=events)
    [session] = await memory.sessions(namespace)
    assert [t.text for t in await memory.turns(namespace, session.id)] == ["Lisbon in May"]  # no text: no turn

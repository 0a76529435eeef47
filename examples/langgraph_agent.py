"""A small LangGraph agent whose long-term memory is kg-memory's LangGraph store (offline: no LLM;
the "agent" is a deterministic node). Run from the checkout: python examples/langgraph_agent.py

Each turn, the agent recalls the stored memories closest to the user's message (`store.search`),
answers from the best one, and remembers what the user states ("remember: ..."). Memories live
as (:StoreItem) nodes in the kg namespace `example-langgraph`, under ("users", <user id>, "memories").
"""

from __future__ import annotations

import hashlib
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from kg import Memory
from kg.integrations.langgraph import KgStore


class State(TypedDict):
    user_id: str
    message: str
    answer: str
    log: Annotated[list[str], operator.add]


def recall(state: State, *, store: BaseStore) -> dict:
    hits = store.search(("users", state["user_id"], "memories"), query=state["message"], limit=1)
    if not hits:
        return {"answer": "I don't know yet.", "log": ["recall: nothing stored"]}
    best = hits[0]
    return {"answer": f"From memory: {best.value['text']}", "log": [f"recall: {best.key} ({best.score:.2f})"]}


def remember(state: State, *, store: BaseStore) -> dict:
    text = state["message"]
    if not text.lower().startswith("remember:"):
        return {"log": ["remember: nothing to store"]}
    fact = text.split(":", 1)[1].strip()
    key = hashlib.sha1(fact.encode()).hexdigest()[:12]
    store.put(("users", state["user_id"], "memories"), key, {"text": fact})
    return {"answer": f"Noted: {fact}", "log": [f"remember: stored {key}"]}


def build(store: BaseStore):
    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_node("remember", remember)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "remember")
    graph.add_edge("remember", END)
    return graph.compile(store=store)


def main() -> None:
    with Memory() as memory:
        memory.delete_namespace("example-langgraph")  # start clean each run
        agent = build(KgStore(memory, namespace="example-langgraph"))
        for message in ["remember: my team picked TimescaleDB for the sensor data",
                        "remember: I prefer uv over pip",
                        "which database did we pick for sensors?",
                        "how should I install packages?"]:
            out = agent.invoke({"user_id": "maya", "message": message, "answer": "", "log": []})
            print(f"> {message}\n  {out['answer']}   [{'; '.join(out['log'])}]")


if __name__ == "__main__":
    main()

"""A LangChain chat whose history and long-term memory are kg-memory (offline: the "model" is a
function answering from what the retriever found). Run from the checkout with the
extra installed (pip install -e '.[langchain]'): python examples/langchain_chat.py

Each chat session's messages are the turns of a kg session (`KgChatMessageHistory`); before
answering, the chain asks `KgRetriever` for the turns of every session that best match the question.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from sensor_chat import CHAT, main, said  # the frame the examples share (sensor_chat.py)

from kg import Memory
from kg.integrations.langchain import KgChatMessageHistory, KgRetriever


def run(memory: Memory, namespace: str) -> list[str]:
    retriever = KgRetriever(memory=memory, namespace=namespace, k=1)
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from memory: {memory}"),
                                               MessagesPlaceholder("history"), ("human", "{question}")])

    def answer(prompt_value: PromptValue) -> AIMessage:  # stands in for an LLM: repeats the best memory
        found = str(prompt_value.to_messages()[0].content).removeprefix("Answer from memory: ")
        return AIMessage(content=f"From memory: {found or 'nothing yet'}")

    def recall(inputs: dict) -> dict:
        return {**inputs, "memory": " ".join(d.page_content for d in retriever.invoke(inputs["question"]))}

    chain = RunnableLambda(recall) | prompt | RunnableLambda(answer)
    chat = RunnableWithMessageHistory(chain, lambda sid: KgChatMessageHistory(memory, namespace, sid),
                                      input_messages_key="question", history_messages_key="history")
    lines = []
    for session, question in CHAT:
        reply = chat.invoke({"question": question}, config={"configurable": {"session_id": session}})
        lines.append(said(question, reply.content, session))
    history = KgChatMessageHistory(memory, namespace, "monday").messages
    lines.append(f"monday's history: {len(history)} messages, kept as turns of kg session 'monday'")
    return lines


if __name__ == "__main__":
    main(run, "example-langchain")

"""`Memory`: `AsyncMemory` (kg.async_memory), synchronous. A private event loop runs in a background
thread; every method is `twin(AsyncMemory.method)` (kg.synchronous), with its async twin's signature
for `inspect` and the type checker alike.

    with Memory() as memory:
        memory.add_message("acme", "user", "I moved to Lisbon", ts=datetime.now(UTC))
        hits = memory.search_turns("acme", "where does the user live?", k=5)
"""

from __future__ import annotations

from kg.async_memory import AsyncMemory
from kg.core.settings.tree import Settings
from kg.synchronous import Synchronous, twin, twin_stream

__all__ = ["AsyncMemory", "Memory"]


class Memory(Synchronous):
    """`AsyncMemory`'s methods, synchronous: `with Memory() as memory: ...`."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._async = AsyncMemory(settings)
        super().__init__("kg-memory-loop")

    @property
    def settings(self) -> Settings:
        return self._async.settings

    def __enter__(self) -> "Memory":
        self.open()
        return self

    open = twin(AsyncMemory.open)
    start = twin(AsyncMemory.start)
    warm = twin(AsyncMemory.warm)
    # -- write
    add_message = twin(AsyncMemory.add_message)
    add_turns = twin(AsyncMemory.add_turns)
    ingest = twin(AsyncMemory.ingest)
    # -- facts and relationships over time
    remember = twin(AsyncMemory.remember)
    facts = twin(AsyncMemory.facts)
    history = twin(AsyncMemory.history)
    relate = twin(AsyncMemory.relate)
    relationships = twin(AsyncMemory.relationships)
    # -- sessions and their summaries
    session = twin(AsyncMemory.session)
    sessions = twin(AsyncMemory.sessions)
    turns = twin(AsyncMemory.turns)
    close_session = twin(AsyncMemory.close_session)
    summarize_due = twin(AsyncMemory.summarize_due)
    summaries = twin(AsyncMemory.summaries)
    # -- retrieval
    search_turns = twin(AsyncMemory.search_turns)
    retrieve = twin(AsyncMemory.retrieve)
    search_sessions = twin(AsyncMemory.search_sessions)
    search_memories = twin(AsyncMemory.search_memories)
    recall = twin(AsyncMemory.recall)
    # -- corrections and rules
    add_correction = twin(AsyncMemory.add_correction)
    confirm_rule = twin(AsyncMemory.confirm_rule)
    core_rules = twin(AsyncMemory.core_rules)
    corrections = twin(AsyncMemory.corrections)
    correction_clusters = twin(AsyncMemory.correction_clusters)
    maintain_corrections = twin(AsyncMemory.maintain_corrections)
    # -- indexing and background jobs
    index_session = twin(AsyncMemory.index_session)
    index_pending = twin(AsyncMemory.index_pending)
    enqueue_job = twin(AsyncMemory.enqueue_job)
    jobs = twin(AsyncMemory.jobs)
    job = twin(AsyncMemory.job)
    retry_job = twin(AsyncMemory.retry_job)
    run_jobs = twin(AsyncMemory.run_jobs)
    # -- forgetting, export and import
    erase_session = twin(AsyncMemory.erase_session)
    erase_turn = twin(AsyncMemory.erase_turn)
    erase_subject = twin(AsyncMemory.erase_subject)
    erase_namespace = twin(AsyncMemory.erase_namespace)
    erasures = twin(AsyncMemory.erasures)
    delete_namespace = twin(AsyncMemory.delete_namespace)
    export_namespace = twin_stream(AsyncMemory.export_namespace)
    # -- review: why, what changed, undo, confirm
    explain = twin(AsyncMemory.explain)
    changes = twin(AsyncMemory.changes)
    revert = twin(AsyncMemory.revert)
    confirm = twin(AsyncMemory.confirm)
    import_records = twin(AsyncMemory.import_records)
    # -- a user's existing history (docs/import.md)
    import_claude_code = twin(AsyncMemory.import_claude_code)
    import_chatgpt = twin(AsyncMemory.import_chatgpt)
    import_messages = twin(AsyncMemory.import_messages)

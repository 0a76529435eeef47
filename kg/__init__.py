"""kg-memory: long-term, bi-temporal conversational memory for AI agents, on Neo4j."""

from kg.config import Settings, load_settings
from kg.memory import AsyncMemory, Memory

__all__ = ["AsyncMemory", "Memory", "Settings", "load_settings"]

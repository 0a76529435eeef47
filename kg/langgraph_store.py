"""Where `KgStore` lived before the integrations got a folder of their own; kept so imports go on working."""

from kg.integrations.langgraph import KgStore

__all__ = ["KgStore"]

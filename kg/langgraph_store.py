"""Deprecated: where `KgStore` lived before the integrations got a folder of their own. Import it from
`kg.integrations.langgraph`; importing this module warns, and it goes in the next release."""

import warnings

from kg.integrations.langgraph import KgStore

warnings.warn("kg.langgraph_store is deprecated: import KgStore from kg.integrations.langgraph",
              DeprecationWarning, stacklevel=2)

__all__ = ["KgStore"]

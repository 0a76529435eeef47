"""Bridges to other systems, apart from the facade: reading a Graphiti graph (`graphiti`, for
`kg import graphiti`) and a LangGraph `BaseStore` (`langgraph`)."""

"""The foundation every path stands on: settings, models, the Neo4j store (and the one converter of
its values), embedders, the LLM transport with its usage meter, and the managed local Neo4j.

It imports nothing from `ingest/`, `queries/` or `kg/`: the write path and the read path take these
services, and the doors in `kg/` put them together.
"""

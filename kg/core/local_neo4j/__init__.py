"""The managed local Neo4j Community server: the launcher (`server`), its pinned jars (`jars`, with
the locks in `locks/` and the maintainers' `lock` writer), the Java it runs on (`java`) and what
differs between the release lines (`lines`)."""

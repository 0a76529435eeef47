"""The MCP door: the server (`kg.mcp.server`: stdio for `kg mcp`, streamable HTTP at `/mcp`), the
check every tool makes before it touches the memory (`door`), and the tools by subject, one module
each with `register(server, door)`: `search`, `sessions`, `facts`, `corrections`, `relationships`,
`erase` and `review` (the same subjects as `kg.http` and `kg.cli`)."""

"""The MCP door: the server (`kg.mcp.server`: stdio for `kg mcp`, streamable HTTP at `/mcp`), the
check every tool makes before it touches the memory (`door`), and the tools by subject: `sessions`,
`facts` (facts, corrections, forgetting) and `relationships`."""

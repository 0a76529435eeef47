"""The one settings tree, read once: the root `Settings` and `load_settings` (`tree`), the shared base
of every section that refuses unknown keys (`base`), the `[memory]` section (`memory`) and its
`[memory.entity_deduplication]` stages (`dedup`)."""

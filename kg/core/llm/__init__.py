"""The one LLM transport (`transport`), its usage meter (`usage`) and one versioned prompt asked
through it (`asker`)."""

// A session call's answer kept for the other step (indexing or summarizing), by its key.
MATCH (:Session {namespace: $namespace, id: $session_id})-[:HAS_ANSWER]->(a:LLMAnswer {key: $key})
RETURN a.answer AS answer

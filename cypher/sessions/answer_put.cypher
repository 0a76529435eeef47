// Keep a session call's answer on the session; answers of older prompts, models or turns go.
MATCH (s:Session {namespace: $namespace, id: $session_id})
OPTIONAL MATCH (s)-[:HAS_ANSWER]->(old:LLMAnswer)
  WHERE old.key <> $key AND old.made_at < $now - duration('PT1H')
DETACH DELETE old
WITH DISTINCT s
MERGE (s)-[:HAS_ANSWER]->(a:LLMAnswer {key: $key})
SET a.answer = $answer, a.made_at = $now
RETURN a.key AS key

MATCH (s:Session {namespace: $namespace, id: $session_id})
RETURN s {.id, .namespace, .started_at, .ended_at, .message_count, .status,
           llm_calls: coalesce(s.llm_calls, 0), input_tokens: coalesce(s.input_tokens, 0),
           output_tokens: coalesce(s.output_tokens, 0)} AS session

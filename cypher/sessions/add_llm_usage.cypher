// What the LLM cost for one session, summed over every indexing and summarization of it.
MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.llm_calls = coalesce(s.llm_calls, 0) + $llm_calls,
    s.input_tokens = coalesce(s.input_tokens, 0) + $input_tokens,
    s.output_tokens = coalesce(s.output_tokens, 0) + $output_tokens
RETURN s.llm_calls AS llm_calls

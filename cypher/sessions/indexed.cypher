// A session's extraction is written: which extractor, model and prompt version produced it, when,
// and up to which turn count (more turns later make it pending again).
MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.extraction_status = 'indexed', s.extracted_at = $now, s.extractor = $stamp.extractor,
    s.model = $stamp.model, s.prompt_version = $stamp.prompt_version, s.extraction_version = $version,
    s.extracted_count = $message_count, s.extraction_error = null, s.extraction_failures = 0
RETURN s.id AS id

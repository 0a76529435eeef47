// Extraction of a session failed: nothing of it was written. Keep the (redacted) reason and count
// the failures; `index_pending` retries it until [memory.indexing] max_failures.
MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.extraction_status = 'extraction_failed', s.extraction_error = $error, s.extraction_failed_at = $now,
    s.extraction_failures = coalesce(s.extraction_failures, 0) + 1, s.extraction_requests = $requests,
    s.extraction_failed_with = $version
RETURN s.extraction_failures AS failures

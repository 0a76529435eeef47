// `kg jobs retry`: a dead (or waiting) job is queued to run now, with fresh attempts; the outputs
// of its finished passes are kept, so it resumes. A done job runs again from the start.
MATCH (j:Job {id: $id})
WHERE j.status IN ['dead', 'queued', 'done', 'superseded']
SET j.pass_outputs = CASE WHEN j.status IN ['done', 'superseded'] THEN '{}' ELSE j.pass_outputs END,
    j.status = 'queued', j.attempts = 0, j.next_attempt_at = datetime(), j.finished_at = null
RETURN j {.*} AS job

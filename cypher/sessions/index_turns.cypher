// Every turn of the sessions in $sessions (a list of {namespace, id}), in order, with what
// summarizing needs (its vector, its context key).
UNWIND $sessions AS key
MATCH (t:Turn)
WHERE t.namespace = key.namespace AND t.session_id = key.id AND t.idx IS NOT NULL  // seeks turn_session
RETURN t.namespace AS namespace, t.session_id AS session_id, t.id AS id, t.idx AS idx, t.role AS role,
       t.speaker AS speaker, t.text AS text, t.ts AS ts, t.embedding AS embedding,
       t.context_text AS context_text, t.follows_question AS follows_question,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY namespace, session_id, idx

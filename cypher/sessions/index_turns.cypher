// Every turn of one session, in order, with what summarizing needs (its vector, its context key).
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.session_id = $session_id AND t.idx IS NOT NULL  // seeks turn_session
RETURN t.id AS id, t.idx AS idx, t.role AS role, t.speaker AS speaker, t.text AS text, t.ts AS ts,
       t.embedding AS embedding, t.context_text AS context_text, t.follows_question AS follows_question,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY t.idx

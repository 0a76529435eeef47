// The chosen turns, as one row of [id, namespace, session_id, idx, role, speaker, text, ts in epoch µs,
// external_id, embedding_model, attachment_kinds, attachment_captions, attachment_urls, trust] (one record:
// decoding many records and their datetimes was the cost).
UNWIND $ids AS id
MATCH (t:Turn {id: id})
RETURN collect([t.id, t.namespace, t.session_id, t.idx, t.role, t.speaker, t.text,
                t.ts.epochSeconds * 1000000 + t.ts.microsecond, t.external_id, t.embedding_model,
                t.attachment_kinds, t.attachment_captions, t.attachment_urls, t.trust]) AS turns

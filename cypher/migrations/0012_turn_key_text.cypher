// A turn's own key (ingest.turn_keys): "Speaker: text [kind: caption]", stored as key_text, is what
// BM25 searches, so a question that names who said it, or what a shared photo showed, finds the turn.
// The index holds the namespace like every fulltext index (migration 0008). Turns written before
// had no attachments: their key is the speaker's name and the text, backfilled here (the same rule
// as ingest.turn_keys.turn_key); `kg reembed` re-embeds them from it.
DROP INDEX turn_text IF EXISTS;
MATCH (t:Turn) WHERE t.key_text IS NULL AND t.text IS NOT NULL
CALL (t) {
  SET t.key_text = CASE WHEN trim(coalesce(t.speaker, '')) = '' THEN t.text ELSE trim(t.speaker) + ': ' + t.text END
} IN TRANSACTIONS OF 5000 ROWS;
CREATE FULLTEXT INDEX turn_key_text IF NOT EXISTS FOR (t:Turn) ON EACH [t.key_text, t.namespace]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};

// Session summaries and the extra search keys of turns. A summary lives in a slot (the session
// summary, a window of turns, or a rollup of windows); a new version in a slot expires the old
// one (kept, with expired_at set, never returned by search). Vector indexes of the same keys are
// in schema/vector_indexes.cypher.
CREATE CONSTRAINT summary_id IF NOT EXISTS FOR (s:Summary) REQUIRE s.id IS UNIQUE;
CREATE INDEX summary_slot IF NOT EXISTS FOR (s:Summary) ON (s.namespace, s.session_id, s.slot);
CREATE INDEX summary_namespace_kind IF NOT EXISTS FOR (s:Summary) ON (s.namespace, s.kind);
CREATE INDEX session_status IF NOT EXISTS FOR (s:Session) ON (s.status);
CREATE FULLTEXT INDEX summary_text IF NOT EXISTS FOR (s:Summary) ON EACH [s.text, s.keywords]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
// A turn's context key: the turn with its neighbours, speakers named (set when its session is summarized).
CREATE FULLTEXT INDEX turn_context_text IF NOT EXISTS FOR (t:Turn) ON EACH [t.context_text]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};

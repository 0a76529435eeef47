// Identity of every node label. Sessions are named by their caller, so their id is unique per namespace.
CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE (s.namespace, s.id) IS UNIQUE;
CREATE CONSTRAINT turn_id IF NOT EXISTS FOR (t:Turn) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT migration_id IF NOT EXISTS FOR (m:Migration) REQUIRE m.id IS UNIQUE;
CREATE CONSTRAINT embedding_space_id IF NOT EXISTS FOR (e:EmbeddingSpace) REQUIRE e.id IS UNIQUE;
CREATE INDEX session_namespace IF NOT EXISTS FOR (s:Session) ON (s.namespace, s.started_at);
CREATE INDEX turn_namespace_ts IF NOT EXISTS FOR (t:Turn) ON (t.namespace, t.ts);
CREATE INDEX turn_session IF NOT EXISTS FOR (t:Turn) ON (t.namespace, t.session_id, t.idx);
CREATE FULLTEXT INDEX turn_text IF NOT EXISTS FOR (t:Turn) ON EACH [t.text]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};

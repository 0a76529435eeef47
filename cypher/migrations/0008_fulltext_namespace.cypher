// The fulltext indexes also hold each node's namespace, so a search restricts Lucene itself to one
// tenant (`+namespace:"…"^0`, built by queries.turns.scoped) instead of ranking every tenant's
// matches and filtering them afterwards: a query's cost then follows its namespace, not the database.
DROP INDEX turn_text IF EXISTS;
CREATE FULLTEXT INDEX turn_text IF NOT EXISTS FOR (t:Turn) ON EACH [t.text, t.namespace]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
DROP INDEX turn_context_text IF EXISTS;
CREATE FULLTEXT INDEX turn_context_text IF NOT EXISTS FOR (t:Turn) ON EACH [t.context_text, t.namespace]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
DROP INDEX summary_text IF EXISTS;
CREATE FULLTEXT INDEX summary_text IF NOT EXISTS FOR (s:Summary) ON EACH [s.text, s.keywords, s.namespace]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};

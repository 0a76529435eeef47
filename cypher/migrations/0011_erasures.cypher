// Erasure records: the content-free audit trail of what `erase_*` removed (kept by a namespace erase).
CREATE CONSTRAINT erasure_id IF NOT EXISTS FOR (x:Erasure) REQUIRE x.id IS UNIQUE;
CREATE INDEX erasure_namespace IF NOT EXISTS FOR (x:Erasure) ON (x.namespace);

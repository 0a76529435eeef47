// Corrections: identities, the per-namespace lock that serializes correction writers (its version
// counts writes, so the nightly job can tell whether anything changed while it computed), the
// nightly clusters, and the indexes browsing and graduation filter on.
CREATE CONSTRAINT correction_id IF NOT EXISTS FOR (c:Correction) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT correction_cluster_id IF NOT EXISTS FOR (k:CorrectionCluster) REQUIRE k.id IS UNIQUE;
CREATE CONSTRAINT correction_lock_namespace IF NOT EXISTS FOR (l:CorrectionLock) REQUIRE l.namespace IS UNIQUE;
CREATE INDEX correction_namespace_status IF NOT EXISTS FOR (c:Correction) ON (c.namespace, c.status);
CREATE INDEX correction_invalidated_at IF NOT EXISTS FOR (c:Correction) ON (c.invalidated_at);
CREATE INDEX correction_cluster_namespace IF NOT EXISTS FOR (k:CorrectionCluster) ON (k.namespace);

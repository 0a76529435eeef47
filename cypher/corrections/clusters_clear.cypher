// The previous run's clusters of a namespace.
MATCH (k:CorrectionCluster)
WHERE k.namespace = $namespace
DETACH DELETE k

// The content-free audit record of one erase: scope, a hash of the target (never its text), when
// (server time), by whom (a key digest prefix, or "local") and how many nodes of each label went.
CREATE (x:Erasure {id: $id, namespace: $namespace, scope: $scope, target_hash: $target_hash, by: $by,
                   counts: $counts, erased_at: datetime()})
RETURN x {.*} AS erasure

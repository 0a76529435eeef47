// The content-free audit record of one erase: scope, a hash of the target (never its text), when
// (server time), by whom (a key digest prefix, or "local"), how many nodes of each label went and
// how many things the erase restored (versions replayed, corrections re-graduated, entities rebuilt).
CREATE (x:Erasure {id: $id, namespace: $namespace, scope: $scope, target_hash: $target_hash, by: $by,
                   counts: $counts, restored: $restored, erased_at: datetime()})
RETURN x {.*} AS erasure

// What a namespace erase is about to delete, by label (the erasure records are kept).
MATCH (n)
WHERE n.namespace = $namespace AND NOT n:Erasure
UNWIND labels(n) AS label
RETURN label, count(*) AS nodes

// One page of a namespace's nodes for `kg export` (docs/export.md), in element-id order from the
// cursor $after. $only: the element ids of a subject-scoped export, or null for the whole namespace.
// $skip_labels: operational nodes that are not memory (jobs, locks).
MATCH (n)
WHERE n.namespace = $namespace AND elementId(n) > $after
  AND ($only IS NULL OR elementId(n) IN $only)
  AND none(label IN labels(n) WHERE label IN $skip_labels)
RETURN elementId(n) AS ref, labels(n) AS labels, properties(n) AS props
ORDER BY ref
LIMIT $limit

// One page of the relationships between two nodes of a namespace for `kg export`, in element-id
// order from the cursor $after; $only and $skip_labels as in export/nodes.
MATCH (a)-[r]->(b)
WHERE a.namespace = $namespace AND b.namespace = $namespace AND elementId(r) > $after
  AND ($only IS NULL OR (elementId(a) IN $only AND elementId(b) IN $only))
  AND none(label IN labels(a) + labels(b) WHERE label IN $skip_labels)
RETURN elementId(r) AS ref, type(r) AS type, elementId(a) AS start, elementId(b) AS end, properties(r) AS props
ORDER BY ref
LIMIT $limit

// LangGraph store: the items under a namespace prefix, scored by cosine to $vector when given
// (Neo4j's score, (1 + cos) / 2), else newest first.
MATCH (i:StoreItem {namespace: $namespace})
WHERE i.path[0..size($prefix)] = $prefix
WITH i, CASE WHEN $vector IS NULL OR i.embedding IS NULL THEN null
             ELSE vector.similarity.cosine(i.embedding, $vector) END AS score
RETURN i.path AS path, i.key AS key, i.value AS value, i.created_at AS created_at, i.updated_at AS updated_at,
       score
ORDER BY coalesce(score, -1.0) DESC, i.updated_at DESC

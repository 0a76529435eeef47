// LangGraph store: the items under a namespace prefix ($omit_expired: not those past their expiry).
// With $vector, each item's score is the raw cosine (-1..1) of the query to its closest vector (one
// per indexed text; Neo4j's similarity is (1 + cos) / 2); items without a vector of the query's size
// follow, unscored. Without $vector: newest first.
MATCH (i:StoreItem {namespace: $namespace})
WHERE i.path[0..size($prefix)] = $prefix
  AND (NOT $omit_expired OR i.expires_at IS NULL OR i.expires_at > datetime())
WITH i, CASE WHEN $vector IS NOT NULL AND i.dims = size($vector)
             THEN [k IN range(0, size(i.vectors) / i.dims - 1) |
                   vector.similarity.cosine(i.vectors[k * i.dims..(k + 1) * i.dims], $vector)] END AS similarities
WITH i, CASE WHEN size(similarities) > 0
             THEN 2 * reduce(best = 0.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END) - 1
        END AS score
RETURN i.id AS id, i.path AS path, i.key AS key, i.value AS value, i.created_at AS created_at,
       i.updated_at AS updated_at, i.ttl_ms AS ttl_ms, score
ORDER BY coalesce(score, -2.0) DESC, i.updated_at DESC

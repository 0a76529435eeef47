// How many live corrections a namespace holds (exact cosine below `exact_search_max`).
MATCH (c:Correction)
WHERE c.namespace = $namespace AND c.invalidated_at IS NULL
RETURN count(c) AS live

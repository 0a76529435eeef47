MATCH (t:Turn) RETURN count(t) AS count

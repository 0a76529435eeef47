// `kg status`: how many turns there are, and how many have token vectors (late interaction).
MATCH (t:Turn)
RETURN count(t) AS turns, count(t.late_tokens) AS with_tokens

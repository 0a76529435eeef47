// Node counts per label (from the count store: constant time).
CALL () {
  MATCH (n:Session) RETURN 'Session' AS label, count(n) AS count
  UNION ALL MATCH (n:Turn) RETURN 'Turn' AS label, count(n) AS count
}
RETURN label, count

// Liveness of the database for GET /health.
RETURN 1 AS ok

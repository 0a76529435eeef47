// Does the server take Cypher 25? An error here means it does not (5.26 LTS); kg.core.store.capabilities.
CYPHER 25 RETURN 1 AS one

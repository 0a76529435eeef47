MATCH (m:Migration) RETURN m.id AS id, m.checksum AS checksum

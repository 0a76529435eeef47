// The server's version and edition (kg.core.store.capabilities), asked once per connection.
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions, edition

// The server's version and edition (kg.core.capabilities), asked once per connection.
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions, edition

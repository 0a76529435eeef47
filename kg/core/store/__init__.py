"""The Neo4j store, the one place that talks to the driver (`store`), what the connected server can
do (`capabilities`) and the one converter of driver values to Python (`values`)."""

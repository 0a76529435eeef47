// One lock node per namespace that writers of messages without a session id queue on, so the same
// message sent twice at once (two batches, two processes) is stored once.
CREATE CONSTRAINT turn_lock_namespace IF NOT EXISTS FOR (l:TurnLock) REQUIRE l.namespace IS UNIQUE;

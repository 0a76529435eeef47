MATCH (j:Job {id: $id})
RETURN j {.*} AS job

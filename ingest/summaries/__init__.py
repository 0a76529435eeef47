"""Session summaries: when a session closes (explicitly, idle, or grown), summarize it whole.

`plan` cuts long sessions into windows and rollup groups (pure); `offline` and `llm` are the two
summarizers behind one interface; `keys` computes the turns' context keys; `writer` runs it all
against the store (versioned replacement of summaries, triggers).
"""

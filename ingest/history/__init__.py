"""Users' existing history into sessions of turns: Claude Code's transcripts (`claude_code`),
ChatGPT's export (`chatgpt`), OpenAI and Anthropic message lists (`messages`). Each reader turns a
file's bytes into `Message`s and `Rejected`s (a bad line or conversation, with file:line and why,
never stopping the rest); `exchanges` is what they share: prompts and answers, tool calls as
attachments. Writing them is the one ingest path (`TurnWriter`), so a re-import writes nothing."""

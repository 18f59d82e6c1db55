"""repeat-guard-acp-agent: the guarded agent loop served as an ACP agent, and a frame recorder."""

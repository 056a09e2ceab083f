"""The transport: the model registry, the LLM client, and the wire under it (connections, rate
limits, retries, timeouts, lanes, structured output, reasoning). Imports nothing else of ``agents``."""

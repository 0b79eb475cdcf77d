"""analyzer: read how LLM applications create and verify prompt/KV-cache reuse."""

__version__ = "0.1.0"

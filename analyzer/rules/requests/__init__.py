"""How each API shape renders and caches a request (`render.toml`), read by `analyzer.requests`."""

"""Resolution: from per-file facts to symbols, modules and call edges (the `index → graph` stage)."""

"""Usage routes shipped as data (`*.toml` in this folder), read by `analyzer.usage.routes`."""

"""Data files: `<feature>.<lang>.toml`, one table of sentence key → template text per feature and language."""

"""Provider prices as data (`*.toml`), read by `analyzer.cost.prices`: one file per provider."""

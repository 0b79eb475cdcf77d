"""Data for `analyze hazards`: sources of volatility, request-part sinks, structural patterns (TOML)."""

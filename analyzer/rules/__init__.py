"""Dispatch rules shipped as data (`*.toml` in this folder), read by `analyzer.resolve.rules`."""

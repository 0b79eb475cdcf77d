"""Dispatch rules shipped as data (`*.toml` in this folder), read by `analyzer.resolve.rules`; and
TypeScript's built-ins (`typescript.toml`), read by `analyzer.rules.typescript`."""

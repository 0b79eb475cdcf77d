"""Controlled observations of a real engine's prompt cache (`analyze observe`).

Data flows one way: `experiment` (TOML → validated `Experiment`, one factor; mode `[request]` or `[app]`) →
a `runner.Runner` — `direct` (`plan`'s exact requests sent by `client`) or `appdriver` (a real app behind the
recording proxy) → `jsonl` (one synced row per request, schema `runner.SCHEMA`) → `summary` (normalised cached
tokens, where hits dropped, what the app reported) → `record` (the route's 8-field research record).
"""

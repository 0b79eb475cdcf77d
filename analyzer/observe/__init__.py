"""Round 3: controlled observations of a real engine's prompt cache (`analyze observe`).

Data flows one way: `experiment` (TOML → validated `Experiment`, one factor) → `plan` (the exact requests, per
series) → `runner` + `client` (send, time, keep the raw usage) → `jsonl` (one synced row per request) →
`summary` (normalised cached tokens, where hits dropped) → `record` (the route's 8-field research record).
"""

"""What reuse is worth: each recorded request priced at its own time by the provider's published prices
(`prices.py`, data in `analyzer/rules/prices/`), the money every prefix break lost, and what-ifs on the log.

`analyzer.api.cost.cost(rows, options)` is the entry point; `report.as_json()` is schema `analyzer.cost/1`.
"""

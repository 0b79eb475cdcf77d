"""Per-file facts extracted from TypeScript/JavaScript sources (the `parse → index` stage)."""

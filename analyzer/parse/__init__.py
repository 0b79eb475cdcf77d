"""tree-sitter parsing of TypeScript/JavaScript (the `parse` stage)."""

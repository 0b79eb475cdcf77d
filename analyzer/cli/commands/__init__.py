"""Subcommands, one module each (discovered by `analyzer.cli`)."""

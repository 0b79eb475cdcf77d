"""Path-search defaults, apart from the algorithms so the CLI can show them without importing networkx."""

DEFAULT_MAX_DEPTH = 40

"""Cache rules of each engine and provider (`analyzer.cachemodel`): parameters, sources and the date checked."""

"""The cross-repo call graph (networkx `MultiDiGraph`), its persistence and its queries."""

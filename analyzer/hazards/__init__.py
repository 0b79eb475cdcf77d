"""`analyze hazards`: what on the request path makes the cached prompt prefix unstable.

Data flows one way: rules (analyzer/rules/hazards/*.toml) → on-demand tree-sitter parsing of the
function bodies that matter (straight from git blobs) → intra-procedural flow summaries → composition
along the call graph's edges → findings (model) → text / JSON.
"""

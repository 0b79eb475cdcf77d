; Named and namespace imports: which local name comes from which module (bare-name sources such as
; `randomUUID` count only when imported from the module a rule names).
(import_statement
  (import_clause (named_imports (import_specifier name: (identifier) @imported alias: (identifier)? @local)))
  source: (string (string_fragment) @module))
(import_statement
  (import_clause (namespace_import (identifier) @local))
  source: (string (string_fragment) @module))
(import_statement
  (import_clause (identifier) @local)
  source: (string (string_fragment) @module))

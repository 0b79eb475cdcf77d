; Imports and exports shared by JavaScript and TypeScript (ES modules and CommonJS `require`).
; `modules.js.scm` and `modules.ts.scm` inherit these; TypeScript adds `import x = require()` and the
; type-only forms.

; Clause parts are matched on their own and placed in their statement by position: a pattern that
; waits for the `source` after a long specifier list keeps one open state per specifier (quadratic).
((import_statement source: (string) @source) @import (#set! role "import.statement"))
((import_clause (identifier) @local) (#set! role "import.default"))
((namespace_import (identifier) @local) (#set! role "import.namespace"))
((import_specifier name: (_) @name) @specifier (#set! role "import.named"))

; CommonJS: `const x = require('m')`, `const { a, b: c } = require('m')`
((variable_declarator name: (identifier) @local
   value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @source .))) @import
 (#eq? @fn "require") (#set! role "import.require"))
((variable_declarator name: (object_pattern) @pattern
   value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @source .))) @import
 (#eq? @fn "require") (#set! role "import.destructure"))

((export_statement "*" source: (string) @source) @export (#set! role "export.star"))
((export_statement (namespace_export (_) @name) source: (string) @source) @export (#set! role "export.namespace"))
((export_statement (export_clause)) @export (#set! role "export.clause"))
((export_specifier name: (_) @name) @specifier (#set! role "export.named"))
((export_statement declaration: (_) @declaration) @export (#set! role "export.declaration"))
((export_statement "default" value: (_) @value) @export (#set! role "export.default"))
((export_statement "default") @export (#set! role "export.default_marker"))

; Imports and exports in JavaScript (ES modules and CommonJS `require`).

((import_statement (import_clause (identifier) @local) source: (string) @source) @import
 (#set! role "import.default"))
((import_statement (import_clause (namespace_import (identifier) @local)) source: (string) @source) @import
 (#set! role "import.namespace"))
((import_statement (import_clause (named_imports
    (import_specifier name: (_) @name alias: (_)? @alias) @specifier)) source: (string) @source) @import
 (#set! role "import.named"))
((import_statement source: (string) @source) @import (#set! role "import.statement"))

((variable_declarator name: (identifier) @local
   value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @source .))) @import
 (#eq? @fn "require") (#set! role "import.namespace"))
((variable_declarator name: (object_pattern) @pattern
   value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @source .))) @import
 (#eq? @fn "require") (#set! role "import.destructure"))

((export_statement "*" source: (string) @source) @export (#set! role "export.star"))
((export_statement (namespace_export (_) @name) source: (string) @source) @export (#set! role "export.namespace"))
((export_statement (export_clause (export_specifier name: (_) @name alias: (_)? @alias) @specifier)
   source: (string)? @source) @export
 (#set! role "export.named"))
((export_statement declaration: (_) @declaration) @export (#set! role "export.declaration"))
((export_statement "default" value: (_) @value) @export (#set! role "export.default"))
((export_statement "default") @export (#set! role "export.default_marker"))

; inherits: ecma
; Imports and exports only TypeScript has (the shared ones: modules.ecma.scm).

((import_statement (import_require_clause (identifier) @local source: (string) @source)) @import
 (#set! role "import.require"))
((import_statement "type") @import (#set! role "import.type_only"))
((import_specifier "type") @specifier (#set! role "import.specifier_type_only"))

((export_statement "=" (_) @value) @export (#set! role "export.assign"))
((export_statement "type") @export (#set! role "export.type_only"))
; `export type * from` (TS 5) is newer than the grammar: the `type` keyword arrives wrapped in an ERROR
((export_statement (ERROR "type")) @export (#set! role "export.type_only"))
((export_specifier "type") @specifier (#set! role "export.specifier_type_only"))

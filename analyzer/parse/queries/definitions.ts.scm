; Named definitions in TypeScript / TSX. Every pattern sets `role` (what the Python side builds)
; and captures @def (the declaration), @name, and, where the body lives in another node, @value.

((function_declaration name: (identifier) @name) @def (#set! role "def.function"))
((generator_function_declaration name: (identifier) @name) @def (#set! role "def.function"))
; overload signatures and `declare function`: kept only when no implementation follows
((function_signature name: (identifier) @name) @def (#set! role "def.function_signature"))

((class_declaration name: (type_identifier) @name) @def (#set! role "def.class"))
((abstract_class_declaration name: (type_identifier) @name) @def (#set! role "def.class"))
((class name: (type_identifier) @name) @def (#set! role "def.class"))
((interface_declaration name: (type_identifier) @name) @def (#set! role "def.interface"))
((type_alias_declaration name: (type_identifier) @name) @def (#set! role "def.type_alias"))
((enum_declaration name: (identifier) @name) @def (#set! role "def.enum"))

; class members and object-literal shorthand methods (the parent decides which)
((method_definition name: (_) @name) @def (#set! role "def.method"))
((abstract_method_signature name: (_) @name) @def (#set! role "def.method"))
((interface_body (method_signature name: (_) @name) @def) (#set! role "def.method_signature"))
; class-body signatures: overloads (yield to the implementation) and `declare class` members
((class_body (method_signature name: (_) @name) @def) (#set! role "def.method_overload"))
((type_alias_declaration value: (object_type (method_signature name: (_) @name) @def)) (#set! role "def.method_signature"))
; a class field holding a function behaves like a method (`handler = () => {…}`)
((public_field_definition name: (_) @name
   value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.field_function"))

; `const f = (…) => …`, `const f = function () {…}`, `const C = class {…}`
((variable_declarator name: (identifier) @name
   value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.var_function"))
((variable_declarator name: (identifier) @name value: (class) @value) @def (#set! role "def.var_class"))

; object-literal properties whose value is a function
((pair key: (_) @name value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.property_function"))

; `export default function () {}` / `export default () => …` / `export default class {}`
((export_statement value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.default_function"))
((export_statement value: (class) @value) @def (#set! role "def.default_class"))

; `declare module 'x' { … }` / `declare global { … }`: augmentations
((ambient_declaration (module name: (_) @name body: (_) @body)) @ambient (#set! role "ambient.module"))
((ambient_declaration "global" (statement_block) @body) @ambient (#set! role "ambient.global"))
((ambient_declaration (_) @declaration) (#set! role "ambient.declare"))

; inherits: ecma
; Named definitions only TypeScript / TSX have or spell this way (the rest: definitions.ecma.scm).

; overload signatures and `declare function`: kept only when no implementation follows
((function_signature name: (identifier) @name) @def (#set! role "def.function_signature"))

((class_declaration name: (type_identifier) @name) @def (#set! role "def.class"))
((abstract_class_declaration name: (type_identifier) @name) @def (#set! role "def.class"))
((class name: (type_identifier) @name) @def (#set! role "def.class"))
((interface_declaration name: (type_identifier) @name) @def (#set! role "def.interface"))
((type_alias_declaration name: (type_identifier) @name) @def (#set! role "def.type_alias"))
((enum_declaration name: (identifier) @name) @def (#set! role "def.enum"))

((abstract_method_signature name: (_) @name) @def (#set! role "def.method"))
((interface_body (method_signature name: (_) @name) @def) (#set! role "def.method_signature"))
; class-body signatures: overloads (yield to the implementation) and `declare class` members
((class_body (method_signature name: (_) @name) @def) (#set! role "def.method_overload"))
((type_alias_declaration value: (object_type (method_signature name: (_) @name) @def)) (#set! role "def.method_signature"))
; a class field holding a function behaves like a method (`handler = () => {…}`)
((public_field_definition name: (_) @name
   value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.field_function"))

; `declare module 'x' { … }` / `declare global { … }`: augmentations
((ambient_declaration (module name: (_) @name body: (_) @body)) @ambient (#set! role "ambient.module"))
((ambient_declaration "global" (statement_block) @body) @ambient (#set! role "ambient.global"))
((ambient_declaration (_) @declaration) (#set! role "ambient.declare"))

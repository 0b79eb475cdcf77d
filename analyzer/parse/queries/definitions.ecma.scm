; Named definitions shared by JavaScript and TypeScript. Every pattern sets `role` (what the Python side
; builds) and captures @def (the declaration), @name, and, where the body lives in another node, @value.
; `definitions.js.scm` and `definitions.ts.scm` inherit these and add what only their grammar has.

((function_declaration name: (identifier) @name) @def (#set! role "def.function"))
((generator_function_declaration name: (identifier) @name) @def (#set! role "def.function"))

; class members and object-literal shorthand methods (the parent decides which)
((method_definition name: (_) @name) @def (#set! role "def.method"))

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

; inherits: ecma
; Named definitions as the JavaScript grammar spells them (the rest: definitions.ecma.scm): class names
; are identifiers, class fields `field_definition`s.

((class_declaration name: (identifier) @name) @def (#set! role "def.class"))
((class name: (identifier) @name) @def (#set! role "def.class"))
((field_definition property: (_) @name
   value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.field_function"))

; inherits: ecma
; Class fields in JavaScript (`field_definition`; parameter lists: members.ecma.scm).

((class_body (field_definition property: (_) @name) @field) @body (#set! role "field.class"))
((field_definition "static") @field (#set! role "field.static"))

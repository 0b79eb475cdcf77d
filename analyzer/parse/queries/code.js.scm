; inherits: ecma
; Executable facts only the JavaScript grammar spells this way (the rest: code.ecma.scm).

((call_expression optional_chain: (optional_chain)) @call (#set! role "call.optional"))
((class_body (field_definition property: (_) @name value: (object) @object)) @body (#set! role "holder.field"))

; inherits: ecma
; Class fields, interface / object-type members, signature parameters and parameter properties: what only
; TypeScript / TSX have (parameter lists of functions with bodies: members.ecma.scm).

; class fields: @body is the class body (the class definition that owns it is known by the body)
((class_body (public_field_definition name: (_) @name) @field) @body (#set! role "field.class"))
((public_field_definition "static") @field (#set! role "field.static"))

; interface members and `type X = { … }` members
((interface_body (property_signature name: (_) @name) @field) @body (#set! role "field.signature"))
((interface_body (method_signature name: (_) @name) @field) @body (#set! role "field.method_signature"))
((type_alias_declaration value: (object_type (property_signature name: (_) @name) @field) @body)
 (#set! role "field.signature"))
; call signatures `interface Fn { (ctx: Context, config: T): any }`: stored as a field named "()" whose type
; is the equivalent function type, so a closure passed where an Fn is expected gets its parameter types
((interface_body (call_signature) @field) @body (#set! role "field.call_signature"))
((type_alias_declaration value: (object_type (method_signature name: (_) @name) @field) @body)
 (#set! role "field.method_signature"))

; parameter lists of signatures without bodies (names only; function *types* are not listed on purpose)
((function_signature parameters: (formal_parameters) @params) @function (#set! role "param.signature"))
((method_signature parameters: (formal_parameters) @params) @function (#set! role "param.signature"))
((abstract_method_signature parameters: (formal_parameters) @params) @function (#set! role "param.signature"))

; constructor parameter properties: `constructor(private readonly s: Session)`
((required_parameter [(accessibility_modifier) (override_modifier) "readonly"]) @param (#set! role "param.property"))
((optional_parameter [(accessibility_modifier) (override_modifier) "readonly"]) @param (#set! role "param.property"))

; Class fields, interface / object-type members, and parameters.

; class fields: @owner is the class node (declaration or expression)
((_ body: (class_body
    (public_field_definition name: (_) @name type: (type_annotation)? @type value: (_)? @value) @field)) @owner
 (#set! role "field.class"))
((public_field_definition "static") @field (#set! role "field.static"))

; interface members and `type X = { … }` members
((interface_declaration body: (interface_body
    (property_signature name: (_) @name type: (type_annotation)? @type) @field)) @owner
 (#set! role "field.signature"))
((interface_declaration body: (interface_body (method_signature name: (_) @name) @field)) @owner
 (#set! role "field.method_signature"))
((type_alias_declaration value: (object_type
    (property_signature name: (_) @name type: (type_annotation)? @type) @field)) @owner
 (#set! role "field.signature"))
((type_alias_declaration value: (object_type (method_signature name: (_) @name) @field)) @owner
 (#set! role "field.method_signature"))

; parameters of functions that have bodies (these also bind names in scope) …
((function_declaration parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.body"))
((generator_function_declaration parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.body"))
((function_expression parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.body"))
((generator_function parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.body"))
((arrow_function parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.body"))
((method_definition parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.body"))
((arrow_function parameter: (identifier) @name @param) @function (#set! role "param.body"))
; … and of signatures without bodies (names only)
((function_signature parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.signature"))
((method_signature parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.signature"))
((abstract_method_signature parameters: (formal_parameters
     [(required_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default)
      (optional_parameter pattern: (_) @name type: (type_annotation)? @type value: (_)? @default) @optional
     ] @param)) @function
 (#set! role "param.signature"))

; constructor parameter properties: `constructor(private readonly s: Session)`
((required_parameter [(accessibility_modifier) (override_modifier) "readonly"]) @param (#set! role "param.property"))
((optional_parameter [(accessibility_modifier) (override_modifier) "readonly"]) @param (#set! role "param.property"))

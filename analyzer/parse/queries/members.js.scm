; Class fields and parameter lists in JavaScript (optional parts are read from fields in Python).

((class_body (field_definition property: (_) @name) @field) @body (#set! role "field.class"))
((field_definition "static") @field (#set! role "field.static"))

((function_declaration parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((generator_function_declaration parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((function_expression parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((generator_function parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((arrow_function parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((arrow_function parameter: (identifier) @params) @function (#set! role "param.body"))
((method_definition parameters: (formal_parameters) @params) @function (#set! role "param.body"))

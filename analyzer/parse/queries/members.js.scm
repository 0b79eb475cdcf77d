; Class fields and parameters in JavaScript.

((_ body: (class_body (field_definition property: (_) @name value: (_)? @value) @field)) @owner
 (#set! role "field.class"))
((field_definition "static") @field (#set! role "field.static"))

((function_declaration parameters: (formal_parameters
     [(identifier) @name
      (assignment_pattern left: (_) @name right: (_) @default) @optional
      (rest_pattern) @name
      (object_pattern) @name
      (array_pattern) @name
     ] @param)) @function
 (#set! role "param.body"))
((generator_function_declaration parameters: (formal_parameters
     [(identifier) @name
      (assignment_pattern left: (_) @name right: (_) @default) @optional
      (rest_pattern) @name
      (object_pattern) @name
      (array_pattern) @name
     ] @param)) @function
 (#set! role "param.body"))
((function_expression parameters: (formal_parameters
     [(identifier) @name
      (assignment_pattern left: (_) @name right: (_) @default) @optional
      (rest_pattern) @name
      (object_pattern) @name
      (array_pattern) @name
     ] @param)) @function
 (#set! role "param.body"))
((generator_function parameters: (formal_parameters
     [(identifier) @name
      (assignment_pattern left: (_) @name right: (_) @default) @optional
      (rest_pattern) @name
      (object_pattern) @name
      (array_pattern) @name
     ] @param)) @function
 (#set! role "param.body"))
((arrow_function parameters: (formal_parameters
     [(identifier) @name
      (assignment_pattern left: (_) @name right: (_) @default) @optional
      (rest_pattern) @name
      (object_pattern) @name
      (array_pattern) @name
     ] @param)) @function
 (#set! role "param.body"))
((method_definition parameters: (formal_parameters
     [(identifier) @name
      (assignment_pattern left: (_) @name right: (_) @default) @optional
      (rest_pattern) @name
      (object_pattern) @name
      (array_pattern) @name
     ] @param)) @function
 (#set! role "param.body"))
((arrow_function parameter: (identifier) @name @param) @function (#set! role "param.body"))

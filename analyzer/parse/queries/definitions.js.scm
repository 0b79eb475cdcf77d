; Named definitions in JavaScript. Same roles and captures as definitions.ts.scm.

((function_declaration name: (identifier) @name) @def (#set! role "def.function"))
((generator_function_declaration name: (identifier) @name) @def (#set! role "def.function"))
((class_declaration name: (identifier) @name) @def (#set! role "def.class"))
((class name: (identifier) @name) @def (#set! role "def.class"))

((method_definition name: (_) @name) @def (#set! role "def.method"))
((field_definition property: (_) @name
   value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.field_function"))

((variable_declarator name: (identifier) @name
   value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.var_function"))
((variable_declarator name: (identifier) @name value: (class) @value) @def (#set! role "def.var_class"))

((pair key: (_) @name value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.property_function"))

((export_statement value: [(arrow_function) (function_expression) (generator_function)] @value) @def
 (#set! role "def.default_function"))
((export_statement value: (class) @value) @def (#set! role "def.default_class"))

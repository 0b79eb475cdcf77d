; Function-like nodes whose bodies `analyze hazards` may read (one capture: @fn).
(function_declaration) @fn
(generator_function_declaration) @fn
(method_definition) @fn
(arrow_function) @fn
(function_expression) @fn

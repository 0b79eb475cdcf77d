; Parameter lists of functions with bodies (their names are bound in the function), shared by JavaScript
; and TypeScript. `members.js.scm` and `members.ts.scm` inherit these and add class fields and what only
; their grammar has. Optional parts (type annotation, initialiser) are read from the node's fields in
; Python: optional captures make the query engine carry alternative states through every sibling, which
; is slow.

((function_declaration parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((generator_function_declaration parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((function_expression parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((generator_function parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((arrow_function parameters: (formal_parameters) @params) @function (#set! role "param.body"))
((arrow_function parameter: (identifier) @params) @function (#set! role "param.body"))
((method_definition parameters: (formal_parameters) @params) @function (#set! role "param.body"))

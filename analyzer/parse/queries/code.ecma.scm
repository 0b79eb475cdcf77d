; Executable facts shared by JavaScript and TypeScript (not extracted from declaration files): calls,
; dynamic imports, anonymous functions (for closure nesting), variable bindings and object literals with
; their holders. `code.js.scm` and `code.ts.scm` inherit these and add what only their grammar has.
; Type annotations and other optional parts are read from node fields in Python (see members.ts.scm).

((call_expression function: (import) arguments: (arguments . [(string) (template_string)] @source)) @call
 (#set! role "dynamic_import"))
((call_expression function: (_) @callee arguments: (_) @args) @call (#set! role "call"))
((new_expression constructor: (_) @callee) @call (#set! role "call.new"))

; `return new X(…)` / `() => new X(…)`: the class a function hands back
((return_statement (new_expression constructor: (_) @class)) @return (#set! role "return.new"))
((arrow_function body: (new_expression constructor: (_) @class) @return) (#set! role "return.new"))
; `return this.session.agent`: an unannotated getter/function hands back what that chain is
((return_statement [(member_expression) (identifier)] @chain) @return (#set! role "return.chain"))
; `return ok ? provider : undefined`: either branch is what it hands back (the first that is a chain)
((return_statement (ternary_expression consequence: [(member_expression) (identifier)] @chain)) @return
 (#set! role "return.chain"))
((return_statement (ternary_expression alternative: [(member_expression) (identifier)] @chain)) @return
 (#set! role "return.chain"))

; anonymous functions: calls inside them belong to the enclosing named definition, one level deeper
([(arrow_function) (function_expression) (generator_function)] @function (#set! role "scope.function"))

; variables: `const x = new C()`, `let y = f()`, `const { a: b } = g()`, `for (const x of xs)`
((lexical_declaration kind: _ @kind (variable_declarator name: (identifier) @name) @binding) (#set! role "binding"))
((variable_declaration (variable_declarator name: (identifier) @name) @binding) (#set! role "binding.var"))
((lexical_declaration kind: _ @kind (variable_declarator name: (object_pattern) @pattern value: (_) @value) @binding)
 (#set! role "binding.destructure"))
((variable_declaration (variable_declarator name: (object_pattern) @pattern value: (_) @value) @binding)
 (#set! role "binding.destructure_var"))
((for_in_statement left: (identifier) @name operator: "of" right: (_) @value) @binding (#set! role "binding.for_of"))
((catch_clause parameter: (identifier) @name) @binding (#set! role "binding.catch"))
; `obj.onChunk = fn`: a function-typed property set after construction (calls of it reach `fn`)
((assignment_expression left: (member_expression) @target
   right: [(identifier) (member_expression) (arrow_function) (function_expression)] @value) @assign
 (#set! role "assign.member"))

; object literals and how they are held (arguments are seen from the call); TypeScript adds the same
; holders with `{…} satisfies T` / `{…} as T` in code.ts.scm
((object) @object (#set! role "object"))
((variable_declarator name: (identifier) @name value: [(object) @object (parenthesized_expression (object) @object)])
 @declarator (#set! role "holder.variable"))
((return_statement [(object) @object (parenthesized_expression (object) @object)]) (#set! role "holder.return"))
; `return Object.freeze({…})`: freezing keeps the object's type, so it is still the returned object
((return_statement (call_expression
    function: (member_expression object: (identifier) @_object property: (property_identifier) @_freeze)
    arguments: (arguments . (object) @object .)))
 (#eq? @_object "Object") (#eq? @_freeze "freeze") (#set! role "holder.return"))
((arrow_function body: (parenthesized_expression (object) @object)) (#set! role "holder.return"))
((pair key: (_) @key value: [(object) @object (parenthesized_expression (object) @object)])
 (#set! role "holder.property"))
((assignment_expression left: (_) @target right: (object) @object) (#set! role "holder.assign"))
((export_statement value: (object) @object) (#set! role "holder.export_default"))

; inherits: ecma
; Executable facts only TypeScript / TSX have (the rest: code.ecma.scm).

((call_expression "?.") @call (#set! role "call.optional"))
; `using x = …` / `await using x = …` (explicit resource management) bind like `const`
((assignment_expression "using" left: (identifier) @name right: (_) @value) @binding (#set! role "binding.using"))

; object literals held through `satisfies T` / `as T` (the plain holders are in code.ecma.scm)
((variable_declarator name: (identifier) @name
   value: [(satisfies_expression (object) @object (_) @satisfies)
           (as_expression (object) @object (_) @as)]) @declarator
 (#set! role "holder.variable"))
((return_statement [(satisfies_expression (object) @object (_) @satisfies)
                    (as_expression (object) @object (_) @as)])
 (#set! role "holder.return"))
((arrow_function body: (parenthesized_expression [(satisfies_expression (object) @object (_) @satisfies)
                                                  (as_expression (object) @object (_) @as)]))
 (#set! role "holder.return"))
((pair key: (_) @key value: [(satisfies_expression (object) @object (_) @satisfies)
                              (as_expression (object) @object (_) @as)])
 (#set! role "holder.property"))
((class_body (public_field_definition name: (_) @name
    value: [(object) @object (satisfies_expression (object) @object (_) @satisfies)
            (as_expression (object) @object (_) @as)])) @body
 (#set! role "holder.field"))
((assignment_expression left: (_) @target
   right: [(satisfies_expression (object) @object (_) @satisfies)
           (as_expression (object) @object (_) @as)])
 (#set! role "holder.assign"))
((export_statement value: [(satisfies_expression (object) @object (_) @satisfies)
                           (as_expression (object) @object (_) @as)])
 (#set! role "holder.export_default"))

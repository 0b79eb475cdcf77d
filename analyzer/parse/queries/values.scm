; Values no call fact holds (analyzer.index.model.Value): member reads, assignment targets, updates, iterated
; values, literal texts, and the CommonJS module-wrapper names. The extractor keeps the outermost member of a
; chain that is not called, written or updated, and literals of at least LITERAL_MIN_CHARS characters.

((member_expression) @value (#set! role "value.member"))
((subscript_expression) @value (#set! role "value.member"))
((assignment_expression left: [(member_expression) (subscript_expression)] @target) @value
 (#set! role "value.assign"))
((update_expression argument: (_) @target) @value (#set! role "value.update"))
((for_in_statement right: (_) @target) @value (#set! role "value.iterate"))
((spread_element (_) @target) @value (#set! role "value.iterate"))
((string) @value (#set! role "value.literal"))
((template_string) @value (#set! role "value.literal"))
; `__dirname`, `__filename`: read as free names in CommonJS modules
((identifier) @value (#match? @value "^__[a-z]+$") (#set! role "value.ident"))

; Syntax errors tree-sitter recovered from (counted, never fatal).

((ERROR) @error (#set! role "error"))
((MISSING) @error (#set! role "error"))

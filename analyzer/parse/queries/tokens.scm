; Tokens the body hash treats specially: comments are dropped, literals are kept verbatim
; (whitespace inside a string is code; whitespace between tokens is not).

((comment) @comment (#set! role "token.comment"))
([(string) (template_string) (regex)] @literal (#set! role "token.literal"))

; `extends` of JavaScript classes (the heritage holds the expression directly).

((class_declaration (class_heritage (_) @extends)) @owner (#set! role "heritage.extends"))
((class (class_heritage (_) @extends)) @owner (#set! role "heritage.extends"))

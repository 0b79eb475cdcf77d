; `extends` of JavaScript classes (the heritage holds the expression directly).

((_ (class_heritage (_) @extends)) @owner (#set! role "heritage.extends"))

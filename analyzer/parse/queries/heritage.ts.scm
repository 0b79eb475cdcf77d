; `extends` / `implements` of classes and interfaces; @owner is the class/interface node.

((_ (class_heritage (extends_clause) @extends)) @owner (#set! role "heritage.extends"))
((_ (class_heritage (implements_clause (_) @implements))) @owner (#set! role "heritage.implements"))
((interface_declaration (extends_type_clause type: (_) @extends)) @owner (#set! role "heritage.interface_extends"))

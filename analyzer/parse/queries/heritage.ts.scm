; `extends` / `implements` of classes and interfaces; @owner is the class/interface node.
; (Rooted at the concrete node types: a wildcard root `(_ …)` is tried at every node and is slow.)

((class_declaration (class_heritage (extends_clause) @extends)) @owner (#set! role "heritage.extends"))
((abstract_class_declaration (class_heritage (extends_clause) @extends)) @owner (#set! role "heritage.extends"))
((class (class_heritage (extends_clause) @extends)) @owner (#set! role "heritage.extends"))
((class_declaration (class_heritage (implements_clause (_) @implements))) @owner (#set! role "heritage.implements"))
((abstract_class_declaration (class_heritage (implements_clause (_) @implements))) @owner
 (#set! role "heritage.implements"))
((class (class_heritage (implements_clause (_) @implements))) @owner (#set! role "heritage.implements"))
((interface_declaration (extends_type_clause type: (_) @extends)) @owner (#set! role "heritage.interface_extends"))

; JSX elements: `<Comp prop={value} />` hands its attributes to Comp as one props object, so a call of
; a function-typed prop inside Comp reaches the value given here (attributes are read in Python).
; Only the TSX and JavaScript grammars have these node types; plain TypeScript has no JSX aspect.
((jsx_opening_element name: (_) @name) @element (#set! role "jsx"))
((jsx_self_closing_element name: (_) @name) @element (#set! role "jsx"))

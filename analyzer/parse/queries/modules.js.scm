; inherits: ecma
; Imports and exports in JavaScript: exactly the shared ones (modules.ecma.scm).

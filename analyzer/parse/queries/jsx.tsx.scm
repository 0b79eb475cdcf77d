; inherits: javascript
; JSX in TSX: the same node types as in JavaScript (jsx.javascript.scm).

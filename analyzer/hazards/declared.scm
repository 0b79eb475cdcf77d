; Declared types of names inside a function (analyze hazards, records.py): @name and its @type annotation.
(required_parameter pattern: (identifier) @name type: (type_annotation) @type)
(optional_parameter pattern: (identifier) @name type: (type_annotation) @type)
(variable_declarator name: (identifier) @name type: (type_annotation) @type)

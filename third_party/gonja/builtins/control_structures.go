package builtins

import controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"

// ControlStructures exports all builtins controlStructures
var ControlStructures = controlStructures.All

package agentlock

import "github.com/dome-registry/dome/pkg/schemaval"

// Diagnostic is one problem in an input file with its line, column and field.
type Diagnostic = schemaval.Diagnostic

// InvalidError is an input file with one or more problems (exit 2).
type InvalidError = schemaval.InvalidError

func invalid(file string, diags []Diagnostic) error { return schemaval.Invalid(file, diags) }

func fieldPath(tokens []string) string { return schemaval.FieldPath(tokens) }

const keySuffix = schemaval.KeySuffix

package errkind

import (
	"errors"
	"strings"
)

// InputError reports an input the user must fix: a file, a flag, a ref or a
// request. Source names the input (a path, "tool@ref", a flag), Field the place
// inside it (a JSON pointer, a field name, "line 3"), Problem what is wrong and
// Hint what to do about it.
type InputError struct {
	Source  string
	Field   string
	Problem string
	Hint    string
	Err     error // optional underlying cause
}

func (e *InputError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if e.Err != nil && e.Problem == "" {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

// Input returns an *InputError.
func Input(source, field, problem, hint string) error {
	return &InputError{Source: source, Field: field, Problem: problem, Hint: hint}
}

// CheckError reports a check that ran to completion and failed: drift, a
// conflict, a bad signature. Details are extra lines for the user.
type CheckError struct {
	Problem string
	Details []string
	Hint    string
}

func (e *CheckError) Error() string { return e.Problem }

// Check returns a *CheckError.
func Check(problem string, details ...string) error {
	return &CheckError{Problem: problem, Details: details}
}

// IsInput reports whether err is (or wraps) an *InputError.
func IsInput(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// IsCheck reports whether err is (or wraps) a *CheckError.
func IsCheck(err error) bool {
	var ce *CheckError
	return errors.As(err, &ce)
}

// HintOf returns the hint carried by err's InputError or CheckError, if any.
func HintOf(err error) string {
	var ie *InputError
	if errors.As(err, &ie) && ie.Hint != "" {
		return ie.Hint
	}
	var ce *CheckError
	if errors.As(err, &ce) && ce.Hint != "" {
		return ce.Hint
	}
	return ""
}

package exec

import (
	"errors"

	"github.com/nikolalohinski/gonja/v2/nodes"
)

// TemplateError is an error in executing a template: the line of the
// expression or tag that failed, and what was wrong in Jinja's words (an
// undefined name's message, a function's error), without gonja's prints of
// its syntax tree. Its Error() is the whole chain, as gonja has always
// said it; errors.As finds it in an error that Execute returns.
type TemplateError struct {
	// File is the template the failing line is in when it is known to be
	// another than the one executed (a macro's body written in an
	// imported file); "" for the one executed.
	File string
	// Macro is the macro whose body failed, if any.
	Macro   string
	Line    int
	Message string
	Err     error
}

func (e *TemplateError) Error() string { return e.Err.Error() }
func (e *TemplateError) Unwrap() error { return e.Err }

// newTemplateError is err at line, unless err already tells its line.
func newTemplateError(line int, err error) error {
	var known *TemplateError
	if errors.As(err, &known) {
		return err
	}
	return &TemplateError{Line: line, Message: ErrorMessage(err), Err: err}
}

// inMacro is err, a macro's body failing, said of the macro and of the
// file the macro is written in (when the error does not already name
// one: a macro called inside the macro).
func inMacro(err error, macro *nodes.Macro) error {
	var te *TemplateError
	if !errors.As(err, &te) {
		return &TemplateError{File: macro.Template, Macro: macro.Name, Line: macro.Location.Line, Message: ErrorMessage(err), Err: err}
	}
	if te.Macro == "" {
		te.Macro = macro.Name
		if te.File == "" {
			te.File = macro.Template
		}
	}
	return te
}

// ErrorMessage is what was wrong, in Jinja's words when gonja has them:
// an undefined value's message, else the innermost error of the chain.
func ErrorMessage(err error) string {
	var undefined *UndefinedError
	if errors.As(err, &undefined) {
		return undefined.Message
	}
	var templateError *TemplateError
	if errors.As(err, &templateError) {
		return templateError.Message
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

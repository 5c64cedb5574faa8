package reactor

import (
	"errors"
	"fmt"
)

// Stage is where in the pipeline an error happened.
type Stage string

// Stages of handling one event.
const (
	StageMapping Stage = "mapping" // a mapped file is missing
	StageRender  Stage = "render"  // Jinja
	StageYAML    Stage = "yaml"    // the rendered text is not valid YAML
	StageCompile Stage = "compile" // a reaction is malformed, names an unknown function or wrong arguments
	StageRun     Stage = "run"     // the function failed (after retries)
)

// Errors a reaction run can end with; test them with errors.Is.
var (
	// ErrNoExecutor: the reaction's type (local, wheel, caller) has no
	// executor in this master yet; the reaction is parsed and checked but
	// cannot run.
	ErrNoExecutor = errors.New("no executor")
	// ErrRequisite: a require/onfail names no reaction of this event.
	ErrRequisite = errors.New("requisite not found")
	// ErrFileMissing: a mapped reaction file does not exist.
	ErrFileMissing = errors.New("reaction file missing")
)

// Error locates a failure in a reaction file: it is what brine/reactor/error
// events carry and what `brine reactor test` prints.
type Error struct {
	Stage Stage
	// File is the reaction file; Line its 1-based line (0 when unknown).
	File string
	Line int
	// Column is the 1-based column of a Jinja error in the file (0 when
	// unknown).
	Column int
	// Rendered is set when Line counts lines of the rendered text, not of
	// the file (a Jinja loop or a false `if` changed the line count);
	// `brine reactor test` prints the rendered text with line numbers.
	Rendered bool
	// ID is the reaction id, when the error belongs to one reaction.
	ID  string
	Err error
}

// Error prints file:line: stage: reaction id: message, the form editors jump to.
func (e *Error) Error() string {
	loc := e.File
	switch {
	case e.Rendered:
		loc = fmt.Sprintf("%s (rendered line %d)", e.File, e.Line)
	case e.Line > 0 && e.Column > 0:
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	case e.Line > 0:
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.ID != "" {
		return fmt.Sprintf("%s: %s: reaction %s: %v", loc, e.Stage, e.ID, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", loc, e.Stage, e.Err)
}

// Unwrap gives errors.Is access to the cause (ErrFileMissing, function.ErrUnknownFunction…).
func (e *Error) Unwrap() error { return e.Err }

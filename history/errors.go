package history

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every validation error, so callers can tell bad
// input (exit code 2 in the CLIs) from failures elsewhere.
var ErrInvalid = errors.New("invalid recorded history")

// FormatError reports a problem with the document as a whole: its JSON
// syntax, version, surface, events array or identities.
type FormatError struct {
	File   string // file name as given to the reader; may be empty
	Offset int64  // byte offset of the problem in the input, or -1
	Field  string // top-level field, such as "version" or "identities[2].id"
	Err    error
}

func (e *FormatError) Error() string {
	s := fileOr(e.File)
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (byte %d)", e.Offset)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// RowError reports a problem with one event row: a validation error from the
// reader (it then matches ErrInvalid) or a failure to store the row.
type RowError struct {
	File  string // file name as given to the reader; may be empty
	Index int    // position of the row in the events array, from 0; -1 when unknown
	Seq   int64  // the row's seq, or -1 when it has none or it is unreadable
	Field string // the row field at fault, such as "payload"; empty for the whole row
	Err   error
}

func (e *RowError) Error() string {
	s := fileOr(e.File) + ": "
	switch {
	case e.Index >= 0 && e.Seq >= 0:
		s += fmt.Sprintf("events[%d] (seq %d)", e.Index, e.Seq)
	case e.Index >= 0:
		s += fmt.Sprintf("events[%d]", e.Index)
	default:
		s += fmt.Sprintf("row seq %d", e.Seq)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Err.Error()
}

func (e *RowError) Unwrap() error { return e.Err }

func fileOr(name string) string {
	if name == "" {
		return "<input>"
	}
	return name
}

// invalidError is a validation failure; it matches ErrInvalid.
type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

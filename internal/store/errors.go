package store

import (
	"errors"
	"fmt"
)

// ErrNotFound is matched (errors.Is) by every error that reports a missing
// row: an unknown setting key, or clearing an override that does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrInvalid is matched by every error that rejects a caller's parameters
// before the database is touched.
var ErrInvalid = errors.New("store: invalid argument")

// notFoundError names what was missing while still matching ErrNotFound, so
// callers test with errors.Is and people read one plain sentence.
type notFoundError struct{ what string }

func (e notFoundError) Error() string        { return "store: " + e.what + " not found" }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }

type invalidError struct{ msg string }

func (e invalidError) Error() string        { return "store: " + e.msg }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

func notFound(format string, args ...any) error {
	return notFoundError{what: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return invalidError{msg: fmt.Sprintf(format, args...)}
}

// Package usage holds the error of a configuration the user has to fix on the command line.
package usage

// Error is a configuration the user has to fix on the command line: the CLI
// exits with status 2 for it.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

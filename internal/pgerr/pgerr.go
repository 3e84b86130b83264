// Package pgerr words the error of a PostgreSQL connection that failed
// for a person: pgx tries a server once with TLS and once without
// (sslmode=prefer, the default) and says each attempt's dial error, so
// that a server that is down reads as the same line twice.
package pgerr

import "strings"

// Once returns err with each of its lines said once, on one line when
// one detail is left; it unwraps to err, so errors.Is and errors.As see
// what pgx returned.
func Once(err error) error {
	if err == nil {
		return nil
	}
	lines := strings.Split(err.Error(), "\n")
	seen := map[string]bool{}
	var kept []string
	for _, l := range lines {
		if k := strings.TrimSpace(l); !seen[k] {
			seen[k] = true
			kept = append(kept, l)
		}
	}
	if len(kept) == len(lines) {
		return err
	}
	msg := strings.Join(kept, "\n")
	if len(kept) == 2 {
		msg = kept[0] + " " + strings.TrimSpace(kept[1])
	}
	return &onceError{msg: msg, err: err}
}

type onceError struct {
	msg string
	err error
}

func (e *onceError) Error() string { return e.msg }
func (e *onceError) Unwrap() error { return e.err }

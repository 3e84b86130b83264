//go:build !unix

package pgcluster

import (
	"errors"
	"runtime"
	"syscall"
)

// credential stands in for Unix's syscall.Credential where there is
// none; it is never set.
type credential struct{ Uid, Gid uint32 }

// supported says whether Start can run a cluster here: not off Unix,
// where the reaper (a /bin/sh script), process groups and the Unix
// socket the cluster relies on are missing. This package is linked
// into recorder (its demo), which is built for Windows too.
func supported() error {
	return errors.New("pgcluster: a throwaway PostgreSQL needs Linux or macOS, not " + runtime.GOOS)
}

// procAttr is never called: Start stops at supported.
func procAttr(*credential, bool) *syscall.SysProcAttr { return nil }

// serverCredential is never called: Start stops at supported.
func serverCredential() (*credential, error) { return nil, nil }

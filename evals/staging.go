package evals

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/internal/filelock"
)

// newStaging makes the staging directory of a variant's results, beside
// its results directory dir: .<variant>.running-<random>, with a lock
// file beside it that the run holds until release. A run that dies
// (a second Ctrl-C, a kill) lets go of its lock as its process ends, and
// the next run into the same directory removes what it left: sweep.
func newStaging(dir string) (staging string, release func(), err error) {
	parent, variant := filepath.Dir(dir), filepath.Base(dir)
	sweep(parent, variant)
	f, err := os.CreateTemp(parent, "."+variant+".running-*.lock")
	if err != nil {
		return "", nil, err
	}
	lock := f.Name()
	f.Close()
	unlock, err := filelock.Lock(lock, 0)
	if err != nil {
		os.Remove(lock)
		return "", nil, err
	}
	staging = strings.TrimSuffix(lock, ".lock")
	if err := os.Mkdir(staging, 0o755); err != nil {
		unlock()
		os.Remove(lock)
		return "", nil, err
	}
	return staging, func() {
		unlock()
		os.Remove(lock)
	}, nil
}

// sweep removes the staging directories (and their lock files) of the
// variant's runs that ended without cleaning up: those whose lock no
// process holds. A run still going holds its own.
func sweep(parent, variant string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + variant + ".running-"
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		staging := filepath.Join(parent, strings.TrimSuffix(name, ".lock"))
		if strings.HasSuffix(name, ".lock") {
			if _, err := os.Stat(staging); err == nil {
				continue // the directory's turn decides
			}
		}
		unlock, err := filelock.Lock(staging+".lock", 0)
		if errors.Is(err, filelock.ErrTimeout) {
			continue // a run still going
		}
		if err != nil {
			continue
		}
		os.RemoveAll(staging)
		unlock()
		os.Remove(staging + ".lock")
	}
}

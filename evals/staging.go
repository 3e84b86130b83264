package evals

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/internal/filelock"
	"github.com/agentvcr/agentvcr/internal/pgcluster"
)

// newStaging makes the staging directory of a variant's results, beside
// its results directory dir: .<variant>.running-<random>, with a lock
// file beside it that the run holds until release. A run that dies
// (a second Ctrl-C, a kill) lets go of its lock as its process ends, and
// the next run into the same directory removes what it left: sweep.
//
// drop, if not nil, drops a database a dead run made on the server (its
// attempts' databases, which noteDatabase listed in its lock file).
func newStaging(dir string, drop func(name string)) (staging string, release func(), err error) {
	parent, variant := filepath.Dir(dir), filepath.Base(dir)
	sweep(parent, variant, drop)
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
func sweep(parent, variant string, drop func(name string)) {
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
		if drop != nil {
			for _, name := range listedDatabases(staging + ".lock") {
				drop(name)
			}
		}
		os.RemoveAll(staging)
		unlock()
		os.Remove(staging + ".lock")
	}
}

// noteDatabase lists a database an attempt made in the run's lock file,
// for the sweep of a later run should this one die before it drops it.
func noteDatabase(staging, name string) error {
	f, err := os.OpenFile(staging+".lock", os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(name + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// listedDatabases are the databases a lock file lists: only the names the
// fixture gives its databases, so that a lock file edited by hand never
// drops anything else.
func listedDatabases(lock string) []string {
	raw, err := os.ReadFile(lock)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if pgcluster.Made(line) {
			out = append(out, line)
		}
	}
	return out
}

// stage makes each set's staging directory (with its traces/) beside its
// results directory under out. unstage, deferred at once, removes those
// not put in place (a run or merge that failed) and lets go of their
// locks: nothing is left half-written.
func stage(sets []*set, out string, drop func(name string)) error {
	for _, s := range sets {
		s.dir = filepath.Join(out, s.name, s.variant)
		if err := os.MkdirAll(filepath.Dir(s.dir), 0o755); err != nil {
			return fmt.Errorf("evals: the results directory: %w", err)
		}
		var err error
		// A staging directory of this process's own: two runs into one
		// directory do not write into each other's.
		if s.staging, s.release, err = newStaging(s.dir, drop); err != nil {
			return fmt.Errorf("evals: the results directory: %w", err)
		}
		if err := os.MkdirAll(filepath.Join(s.staging, "traces"), 0o755); err != nil {
			return fmt.Errorf("evals: %w", err)
		}
	}
	return nil
}

func unstage(sets []*set) {
	for _, s := range sets {
		if s.staging != "" {
			os.RemoveAll(s.staging)
		}
		if s.release != nil {
			s.release()
		}
	}
}

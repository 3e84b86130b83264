// Package sharedtest finds the project's shared reference material (the
// getsentry/junior interop samples) for tests. The material lives beside the
// repository, not in it; tests that need it skip when it is absent.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the path of rel inside the shared directory: the directory
// named by $AGENTVCR_SHARED_DIR, else the folder "shared" beside the module
// root. It skips the test, saying so, when the file is absent.
func Path(t testing.TB, rel string) string {
	t.Helper()
	dir := os.Getenv("AGENTVCR_SHARED_DIR")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Skipf("shared material: %v", err)
		}
		dir = filepath.Join(filepath.Dir(root), "shared")
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared material %s is absent (set AGENTVCR_SHARED_DIR to the shared folder): %v", rel, err)
	}
	return p
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

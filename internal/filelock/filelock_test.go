package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLockExcludesAndHandsOn(t *testing.T) {
	name := filepath.Join(t.TempDir(), ".c.yaml.lock")
	unlock, err := Lock(name, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(name); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v %v", info, err)
	}
	// Held: a second Lock in the same process waits, and gives up at its
	// timeout. The wait it leaves behind lets go of what it gets later.
	if _, err := Lock(name, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("second Lock while held: %v; want ErrTimeout", err)
	}
	got := make(chan error, 1)
	var second func()
	go func() {
		var err error
		second, err = Lock(name, 10*time.Second)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a Lock returned while the first was held: %v", err)
	default:
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("the waiting Lock: %v", err)
	}
	second()
	third, err := Lock(name, 10*time.Second)
	if err != nil {
		t.Fatalf("after every holder let go: %v", err)
	}
	third()
}

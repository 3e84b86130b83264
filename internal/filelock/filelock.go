// Package filelock takes advisory locks on files, so that processes that
// rewrite the same file (recording proxies sharing a cassette directory)
// take turns at it instead of each writing over what the other wrote.
//
// A lock is held by an open file: it ends when the process does, however
// it ends, so a writer that crashed never leaves a stale lock behind, and
// the lock file itself stays where it is (removing it would let two
// processes lock two different files of the same name).
package filelock

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrTimeout is matched by the error of a Lock that waited its whole
// timeout for another holder to let go.
var ErrTimeout = errors.New("another process holds the lock")

// Lock takes an exclusive advisory lock on the file name, creating it
// (mode 0600) if need be, and waits up to timeout for whoever holds it to
// let go. The returned func releases it. Two Locks of one file in one
// process exclude each other as two processes do.
//
// On platforms with neither flock(2) nor LockFileEx (see lock_other.go),
// Lock only creates the file: writers there are not kept apart.
func Lock(name string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	release := func() { f.Close() } // closing the file ends its lock
	if ok, err := tryLock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	} else if ok {
		return release, nil
	}
	// Held: wait in the kernel, which hands the lock on as soon as it is
	// let go, rather than polling; a goroutine keeps the wait bounded.
	got := make(chan error, 1)
	go func() { got <- waitLock(f) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		return release, nil
	case <-timer.C:
		// The wait goes on until the holder lets go; what it gets then
		// is let go at once.
		go func() {
			<-got
			f.Close()
		}()
		return nil, fmt.Errorf("lock %s: %w for more than %v", name, ErrTimeout, timeout)
	}
}

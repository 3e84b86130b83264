//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package filelock

import "os"

// Here (Solaris, AIX, Plan 9, WebAssembly) there is no lock to take:
// writers of one file are not kept apart.
func tryLock(*os.File) (bool, error) { return true, nil }

func waitLock(*os.File) error { return nil }

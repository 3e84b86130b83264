// Package atomicfile writes files so that a reader sees either the old file
// or the whole new one, and a failed write leaves nothing behind.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces the file name with what write writes, through a
// temporary file in the same directory that is synced and then renamed over
// name. The file gets mode perm. If write or any step fails, the temporary
// file is removed and name is untouched.
//
// When name exists and is not a regular file (a device such as /dev/stdout,
// a named pipe), there is nothing to replace atomically: Write writes to it
// directly.
func Write(name string, perm os.FileMode, write func(io.Writer) error) (err error) {
	if info, err := os.Stat(name); err == nil && !info.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.json")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, "new")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != "new" {
		t.Fatalf("file holds %q (%v); want new", got, err)
	}
	if info, _ := os.Stat(name); info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v; want 0600", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("directory holds %v; want only the file", entries)
	}
}

func TestFailedWriteLeavesOldFileAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.json")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(name, 0o600, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v; want the write's error", err)
	}
	got, _ := os.ReadFile(name)
	if string(got) != "old" {
		t.Fatalf("file holds %q; want old", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("directory holds %v; want only the old file", entries)
	}
}

func TestWriteToDeviceWritesThrough(t *testing.T) {
	if err := Write(os.DevNull, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, "discarded")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(os.DevNull)
	if err != nil || info.Mode().IsRegular() {
		t.Fatalf("%s is now %v (%v): Write replaced a device", os.DevNull, info.Mode(), err)
	}
}

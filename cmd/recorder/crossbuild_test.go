package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The npm package carries recorder for Windows and macOS too
// (js/agentvcr/scripts/pack.mjs), so an edit that breaks their build
// (a Unix-only syscall outside a _unix.go file) fails here, on Linux,
// rather than at release. Go's build cache makes a repeat cheap.
func TestRecorderBuildsForWindowsAndMacOS(t *testing.T) {
	for _, target := range []string{"windows/amd64", "darwin/arm64"} {
		t.Run(strings.ReplaceAll(target, "/", "-"), func(t *testing.T) {
			goos, goarch, _ := strings.Cut(target, "/")
			cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOOS=%s GOARCH=%s go build ./cmd/recorder: %v\n%s", goos, goarch, err, out)
			}
		})
	}
}

// A binary stamped at link time, as the npm package's are, says the
// stamp for --version.
func TestVersionStamp(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "recorder")
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/agentvcr/agentvcr/internal/version.stamp=0.1.0-test", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("recorder --version: %v\n%s", err, out)
	}
	if got, want := string(out), "recorder version 0.1.0-test\n"; got != want {
		t.Errorf("recorder --version = %q, want %q", got, want)
	}
}

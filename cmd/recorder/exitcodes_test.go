package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build builds the package pkg (a path from the working directory) into
// dir and returns the binary.
func build(t *testing.T, dir, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Every command of both binaries, and the programs built on evalcmd and
// catalogcmd, exits with the codes of one table: 1 for an operation that
// failed, 2 for usage and bad input (a missing credential among them,
// named), 130 for an interruption.
func TestTheBuiltCommandsExitCodes(t *testing.T) {
	bin := t.TempDir()
	recorderBin := build(t, bin, "recorder", ".")
	sanitizeBin := build(t, bin, "sanitize", "../sanitize")
	sample, err := filepath.Abs("../../recordings/samples/slack-thread.json")
	if err != nil {
		t.Fatal(err)
	}
	module := userModule(t)
	sub := filepath.Join(module, "cmd") // not the module's root
	evalsBin := build(t, bin, "evals", "./cmd/evals")
	catalogBin := build(t, bin, "catalog", "./cmd/catalog")
	truncated := filepath.Join(t.TempDir(), "cut.json")
	if err := os.WriteFile(truncated, []byte("{\"version\": 1,\n\"surface\": \"web\",\n\"events\": [{\"seq\": 1, \"type\": "), 0o644); err != nil {
		t.Fatal(err)
	}
	const down = "postgres://postgres@127.0.0.1:1/none?sslmode=disable"
	const downPrefer = "postgres://postgres@127.0.0.1:1/none" // pgx tries it twice, with TLS and without
	out := filepath.Join(t.TempDir(), "results")

	tests := []struct {
		name string
		args []string // the first is the binary
		key  string   // MYAGENT_API_KEY
		code int
		says string // once
		dir  string // the working directory; "": the module's root
	}{
		{"export, database down", []string{recorderBin, "export", "--database-url", down, "--conversation", "x"}, "", 1, "dial tcp 127.0.0.1:1: connect: connection refused", ""},
		{"export, database down, tried twice", []string{recorderBin, "export", "--database-url", downPrefer, "--conversation", "x"}, "", 1, "dial tcp 127.0.0.1:1: connect: connection refused", ""},
		{"load, database down", []string{recorderBin, "load", "--database-url", down, sample}, "", 1, "dial tcp 127.0.0.1:1: connect: connection refused", ""},
		{"schema, database down", []string{recorderBin, "schema", "--apply", "--database-url", down}, "", 1, "dial tcp 127.0.0.1:1: connect: connection refused", ""},
		{"eval, database down", []string{recorderBin, "eval", evalsBin, "--database-url", down, "--out", out}, "k", 1, "the database server (--database-url)", ""},
		{"eval, database down, tried twice", []string{recorderBin, "eval", evalsBin, "--database-url", downPrefer, "--out", out}, "k", 1, "dial tcp 127.0.0.1:1: connect: connection refused", ""},
		{"eval, no credential", []string{recorderBin, "eval", evalsBin, "--out", out}, "", 2, "eval greetings: missing credential: MYAGENT_API_KEY is not set", ""},
		{"catalog cell, no credential", []string{recorderBin, "catalog", catalogBin, "--suite", "greetings", "--out", out}, "", 2,
			"cell greetings.default.process.hello needs credential MYAGENT_API_KEY (secret_ref MYAGENT_API_KEY, version latest), which is not available", ""},
		{"recorder, unknown flag", []string{recorderBin, "export", "--bogus"}, "", 2, "unknown flag: --bogus (recorder export --help lists its flags)", ""},
		{"recorder eval, unknown flag", []string{recorderBin, "eval", "--bogus"}, "", 2, "unknown flag: --bogus (recorder eval --help lists its flags)", ""},
		{"sanitize, unknown flag", []string{sanitizeBin, "check", "--bogus"}, "", 2, "unknown flag: --bogus (sanitize check --help lists its flags)", ""},
		{"eval program, unknown flag", []string{recorderBin, "eval", evalsBin, "--bogus"}, "", 2, "unknown flag: --bogus (recorder eval " + evalsBin + " --help lists its flags)", ""},
		{"catalog program through recorder, unknown flag", []string{recorderBin, "catalog", "./cmd/catalog", "--bogus"}, "", 2, "unknown flag: --bogus (recorder catalog ./cmd/catalog --help lists its flags)", ""},
		{"catalog program, unknown flag", []string{catalogBin, "--bogus"}, "", 2, "unknown flag: --bogus (catalog --help lists its flags)", ""},
		{"catalog program, no such suite", []string{catalogBin, "--suite", "nope"}, "", 2, `catalog: no cell of suite "nope"`, ""},
		{"view, no file", []string{recorderBin, "view"}, "", 2, "view renders one recorded-history file: recorder view FILE", ""},
		{"prune, no arguments", []string{recorderBin, "prune"}, "", 2, "recorder prune takes DIR USED-FILE...: requires at least 2 arg(s), only received 0 (recorder prune --help says more)", ""},
		{"sanitize check, no path", []string{sanitizeBin, "check"}, "", 2, "sanitize check takes [--json] PATH...: requires at least 1 arg(s), only received 0", ""},
		{"eval, no program", []string{recorderBin, "eval"}, "", 2, "recorder eval needs the program to run: its Go package (recorder eval ./cmd/evals --list)", ""},
		{"eval, no such package", []string{recorderBin, "eval", "./cmd/nothere", "--list"}, "", 2, "./cmd/nothere: no such file or directory, and not a package go build can find", ""},
		{"eval, a package that does not build", []string{recorderBin, "eval", ".", "--list"}, "", 1, "go build .: exit status 1", ""},
		{"eval program, not from the module's root", []string{evalsBin, "--list"}, "", 2, "open cases.jsonl: no such file or directory (the path is relative to the working directory: run the program from its module's root", sub},
		{"catalog program, not from the module's root", []string{catalogBin, "--list"}, "", 2, "source cmd/catalog/*.go names no file (the source files are read under --sources ., from the working directory: run the program from its module's root, or pass --sources DIR)", sub},
		{"sanitize check, truncated file", []string{sanitizeBin, "check", truncated}, "", 2, "cut.json (byte 63): invalid recorded history: unexpected end of input: the document is truncated", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.args[0], tt.args[1:]...)
			cmd.Env = append(os.Environ(), "MYAGENT_API_KEY="+tt.key, "DATABASE_URL=")
			cmd.Dir = tt.dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || strings.Count(stderr.String(), tt.says) != 1 {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and, once, %q", code, stderr.String(), tt.code, tt.says)
			}
			for _, line := range strings.Split(stderr.String(), "\n") {
				if f := strings.SplitN(line, ": ", 3); len(f) == 3 && f[0] == f[1] {
					t.Fatalf("stderr says the prefix %q twice:\n%s", f[0], stderr.String())
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("%s was written: %v", out, err)
			}
		})
	}

	// Ctrl-C while the evals program waits on its database server:
	// recorder passes the signal on, the program stops, and both exit 130.
	t.Run("eval, interrupted", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			if c, err := l.Accept(); err == nil {
				accepted <- c
			}
		}()
		cmd := exec.Command(recorderBin, "eval", evalsBin, "--database-url", "postgres://u@"+l.Addr().String()+"/x?sslmode=disable&connect_timeout=60", "--out", out)
		cmd.Env = append(os.Environ(), "MYAGENT_API_KEY=k")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		select {
		case c := <-accepted:
			defer c.Close()
		case <-time.After(60 * time.Second):
			t.Fatalf("the evals program did not connect to its database server within 60s; stderr:\n%s", stderr.String())
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 130 {
				t.Fatalf("exit %v, stderr:\n%s; want 130", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("recorder eval did not end within 30s of Ctrl-C; stderr:\n%s", stderr.String())
		}
	})
}

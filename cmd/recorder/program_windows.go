package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// runChild runs child (target, as the user named it) until it exits and
// returns its end as recorder's (programExit).
//
// Windows has no process groups to signal and no signals to pass on: the
// program runs in recorder's console (no CREATE_NEW_PROCESS_GROUP), so
// Ctrl-C and Ctrl-Break reach it, and its children, from the console
// itself, once, as they reach recorder; closing the console, logging off
// and shutting down likewise. recorder only catches these events (Go
// delivers them as os.Interrupt and SIGTERM) and drops them, so that it
// outlives the program and exits with its exit code. Without a console,
// as under a service manager, nothing reaches the program but its end:
// recorder does not kill it. tty matters only on Unix.
func runChild(child *exec.Cmd, target string, tty bool) error {
	_ = tty
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(caught)
	if err := child.Start(); err != nil {
		return fmt.Errorf("run %s: %w", target, err)
	}
	return programExit(child.Wait())
}

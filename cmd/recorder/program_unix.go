//go:build unix

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
// On a terminal (tty) the program stays in the terminal's foreground
// process group, so that it can read the terminal and gets Ctrl-C (and
// Ctrl-\) from it, once, with its own children: recorder passes on only
// the signals sent to it alone. Elsewhere the program and its children
// get a process group of their own, and every signal from recorder, each
// once.
func runChild(child *exec.Cmd, target string, tty bool) error {
	if !tty {
		child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := child.Start(); err != nil {
		return fmt.Errorf("run %s: %w", target, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- child.Wait() }()
	for {
		select {
		case s := <-sigs:
			switch {
			case !tty:
				syscall.Kill(-child.Process.Pid, s.(syscall.Signal))
			case s == syscall.SIGTERM || s == syscall.SIGHUP:
				child.Process.Signal(s)
			}
		case err := <-waited:
			return programExit(err)
		}
	}
}

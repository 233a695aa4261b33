package launcher

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// The engine shim is how an engine's whole process tree dies with npcorch,
// even when npcorch is SIGKILLed. Pdeathsig reaches only a direct child,
// and vLLM's EngineCore and worker processes outlive the API server, so
// npcorch starts every engine through a tiny copy of itself:
//
//	npcorch serve engine-shim --lifeline-fd 3 --grace 5s -- vllm serve ...
//
// The shim leads the engine's process group (npcorch starts it with
// Setpgid) and holds the read end of a pipe whose only write end stays in
// npcorch. When npcorch exits for any reason the kernel closes that end;
// the shim reads EOF, sends SIGTERM to its group, waits the grace period,
// and sends SIGKILL to the group, itself included. When the engine exits
// on its own, the shim kills what is left of the group (orphaned workers)
// and exits with the engine's status, so npcorch sees a crash at once.
// Signals to the group reach the engine directly; the shim ignores them
// and waits for the engine.

// ShimExitSignaled is added to the signal number when the engine was
// killed by a signal, as shells do.
const ShimExitSignaled = 128

// Shim exit statuses of its own.
const (
	ShimExitUsage    = 2
	ShimExitNotFound = 127
)

// ShimMain runs the engine shim with the arguments after its command name
// and returns the process exit status. Errors go to stderr, which npcorch
// records in the replica log.
func ShimMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("engine-shim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lifelineFD := fs.Int("lifeline-fd", 3, "file descriptor whose EOF means npcorch has gone (-1: none)")
	grace := fs.Duration("grace", 5*time.Second, "time between SIGTERM and SIGKILL to the group when npcorch has gone")
	if err := fs.Parse(args); err != nil {
		return ShimExitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "npcorch engine shim: no engine command after --")
		return ShimExitUsage
	}
	self := os.Getpid()
	if syscall.Getpgrp() != self {
		if err := syscall.Setpgid(0, 0); err != nil {
			fmt.Fprintf(stderr, "npcorch engine shim: become process-group leader: %v\n", err)
			return ShimExitUsage
		}
	}
	// Catch (not ignore: ignored signals pass through exec) the group's
	// signals: they reach the engine directly, and the shim must outlive
	// it to clean up and report its status.
	// SIGPIPE too: once npcorch is gone, writing to the log pipe must fail
	// with EPIPE instead of killing the shim before it cleans up.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "npcorch engine shim: start %s: %v\n", argv[0], err)
		return ShimExitNotFound
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	parentGone := make(chan struct{})
	if *lifelineFD >= 0 {
		if lifeline := os.NewFile(uintptr(*lifelineFD), "lifeline"); lifeline != nil {
			go func() {
				_, _ = io.Copy(io.Discard, lifeline)
				close(parentGone)
			}()
		}
	}

	select {
	case err := <-exited:
		killOthers(self, ProcScanner{})
		return engineStatus(err, stderr)
	case <-parentGone:
		fmt.Fprintln(stderr, "npcorch engine shim: npcorch has gone; stopping the engine's process group")
		_ = syscall.Kill(-self, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(*grace):
		}
		killOthers(self, ProcScanner{})
		_ = syscall.Kill(-self, syscall.SIGKILL)
		return ShimExitSignaled + int(syscall.SIGKILL)
	}
}

// killOthers SIGKILLs every process of the shim's group but the shim.
func killOthers(self int, scan GroupScanner) {
	for range 50 {
		pids, err := scan.Members(self)
		if err != nil {
			return
		}
		left := 0
		for _, pid := range pids {
			if pid != self {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// engineStatus turns the engine's Wait error into the shim's exit status.
func engineStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "npcorch engine shim: wait for engine: %v\n", err)
		return 1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		fmt.Fprintf(stderr, "npcorch engine shim: engine killed by signal %d (%v)\n", int(ws.Signal()), ws.Signal())
		return ShimExitSignaled + int(ws.Signal())
	}
	return ee.ExitCode()
}

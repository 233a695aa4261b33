package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one launched engine (through the shim when configured): the
// leader of its own process group.
type process struct {
	cmd      *exec.Cmd
	pgid     int
	done     chan struct{} // closed once Wait returned; err is set then
	err      error
	lifeline *os.File // write end; npcorch's exit closes it
	progress chan struct{}
}

// startProcess launches argv, with exactly the environment env, as the
// leader of a new process group, with output to sink. progress receives a
// token for each log line.
func startProcess(argv, env, shim []string, grace, waitDelay time.Duration, sink func(onLine func()) *logSink) (*process, *logSink, error) {
	p := &process{done: make(chan struct{}), progress: make(chan struct{}, 1)}
	log := sink(func() {
		select {
		case p.progress <- struct{}{}:
		default:
		}
	})
	attr := &syscall.SysProcAttr{Setpgid: true}
	var lifelineR *os.File
	if len(shim) > 0 {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, log, fmt.Errorf("create the shim's lifeline pipe: %w", err)
		}
		lifelineR, p.lifeline = r, w
		argv = append(append(append([]string{}, shim...), "--lifeline-fd", "3", "--grace", grace.String(), "--"), argv...)
	} else {
		attr.Pdeathsig = syscall.SIGKILL
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = attr
	cmd.WaitDelay = waitDelay
	if lifelineR != nil {
		cmd.ExtraFiles = []*os.File{lifelineR}
	}
	err := cmd.Start()
	if lifelineR != nil {
		lifelineR.Close()
	}
	if err != nil {
		if p.lifeline != nil {
			p.lifeline.Close()
		}
		return nil, log, err
	}
	p.cmd, p.pgid = cmd, cmd.Process.Pid
	go func() {
		err := cmd.Wait()
		log.flush()
		p.err = err
		if p.lifeline != nil {
			p.lifeline.Close()
		}
		close(p.done)
	}()
	return p, log, nil
}

// exited reports whether the leader has been reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// describeExit words a leader's Wait result; statuses above
// ShimExitSignaled come from the shim reporting a signal.
func describeExit(err error) string {
	if err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		}
		code := ee.ExitCode()
		if code > ShimExitSignaled && code < ShimExitSignaled+65 {
			sig := syscall.Signal(code - ShimExitSignaled)
			return fmt.Sprintf("exit status %d (killed by signal %d, %v)", code, int(sig), sig)
		}
		return fmt.Sprintf("exit status %d", code)
	}
	return err.Error()
}

// notFound reports a start error or shim status meaning the binary is
// missing.
func notFound(err error) bool {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return true
	}
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == ShimExitNotFound
}

// stopGroup ends a process group and proves it empty: SIGTERM to the
// group, grace, SIGKILL to the group, wait for the leader, then SIGKILL
// whatever remains until the scanner finds no live member. killed reports
// that the leader outlived the grace period.
func stopGroup(p *process, scan GroupScanner, grace, verify time.Duration) (killed bool, err error) {
	if !p.exited() {
		_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			killed = true
		}
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(verify + p.cmd.WaitDelay):
		return killed, fmt.Errorf("process %d did not exit after SIGKILL", p.pgid)
	}
	return killed, verifyGone(p.pgid, scan, verify)
}

// verifyGone SIGKILLs the group's remaining members until none is left.
func verifyGone(pgid int, scan GroupScanner, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		pids, err := scan.Members(pgid)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %s of process group %d survived SIGKILL for %v; kill them by hand (kill -9 -- -%d)", joinInts(pids), pgid, within, pgid)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(10 * time.Millisecond)
	}
}

// memoryBack waits until each GPU has at least its free memory before the
// start, less slack.
func memoryBack(probe MemoryProbe, before map[string]uint64, slack uint64, within time.Duration) error {
	deadline := time.Now().Add(within)
	for uuid, want := range before {
		for {
			free, err := probe.FreeBytes(uuid)
			if err != nil {
				return fmt.Errorf("GPU %s: read free memory: %w", uuid, err)
			}
			if free+slack >= want {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("GPU %s: %.1f GiB free after the engine stopped, %.1f GiB before it started; a leftover process may hold the memory (see nvidia-smi)",
					uuid, gib(free), gib(want))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

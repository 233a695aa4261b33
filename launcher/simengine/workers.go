package simengine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/pflag"
)

// SelfEnv names the environment variable that tells an engine how to
// re-execute itself to start its worker children. Its value is either the
// path of an executable or a JSON array of strings (an argv prefix); the
// engine runs that prefix followed by "worker" and worker flags, so the
// prefix must lead to Main. When it is unset the prefix is
// [os.Executable(), "sim-engine"], which is right for the npcorch binary.
//
// A test binary that hosts Main (a TestMain that calls Main when some
// environment variable is set) must put its own path, os.Args[0], in
// SelfEnv in the environment of the engine it starts; workers inherit the
// environment, so they run Main too.
const SelfEnv = "NPCORCH_SIM_SELF"

// selfCommand returns the argv prefix that re-executes Main.
func selfCommand(getenv func(string) string) ([]string, error) {
	v := strings.TrimSpace(getenv(SelfEnv))
	switch {
	case strings.HasPrefix(v, "["):
		var argv []string
		if err := json.Unmarshal([]byte(v), &argv); err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("%s=%q: want an executable path or a non-empty JSON array of strings", SelfEnv, v)
		}
		return argv, nil
	case v != "":
		return []string{v}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for worker processes: %w (set %s)", err, SelfEnv)
	}
	return []string{exe, "sim-engine"}, nil
}

// workerPool holds the engine's worker children, which live in the
// engine's process group until it stops them or dies.
type workerPool struct {
	cmds     []*exec.Cmd
	wg       sync.WaitGroup
	stopping atomic.Bool
	parent   *os.File // write end of the lifeline pipe; never written
}

// workerReady is the line a worker writes on stdout once it is set up.
const workerReady = "READY"

// workerRole is the name vLLM gives its n-th worker process.
func workerRole(n int) string { return fmt.Sprintf("VLLM::Worker_TP%d", n) }

// startWorkers starts n workers by running self + "worker" flags. Unless
// orphan is set, each gets the read end of a pipe whose write end only the
// engine holds: when the engine dies, the worker reads EOF and exits.
// died is called (from another goroutine) for a worker that exits before
// stop or kill.
func startWorkers(self []string, n int, ignoreSIGTERM, orphan bool, died func(role string, err error)) (*workerPool, error) {
	p := &workerPool{}
	var lifeline *os.File
	if !orphan {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("worker lifeline pipe: %w", err)
		}
		lifeline, p.parent = r, w
		defer r.Close()
	}
	for i := range n {
		args := append(append([]string{}, self[1:]...), "worker", "--role", workerRole(i))
		if ignoreSIGTERM {
			args = append(args, "--ignore-sigterm")
		}
		cmd := exec.Command(self[0], args...)
		if lifeline != nil {
			cmd.ExtraFiles = []*os.File{lifeline} // fd 3 in the worker
			cmd.Args = append(cmd.Args, "--lifeline-fd", "3")
		}
		// The worker says "READY" on stdout once its signals are set up, as
		// vLLM's workers report to the engine core before it loads.
		ready, readyW, err := os.Pipe()
		if err != nil {
			p.kill()
			return nil, fmt.Errorf("worker %s: ready pipe: %w", workerRole(i), err)
		}
		cmd.Stdout = readyW
		err = cmd.Start()
		readyW.Close()
		if err != nil {
			ready.Close()
			p.kill()
			return nil, fmt.Errorf("start worker %s (%s): %w", workerRole(i), self[0], err)
		}
		p.cmds = append(p.cmds, cmd)
		p.wg.Add(1)
		go func(role string) {
			defer p.wg.Done()
			err := cmd.Wait()
			if !p.stopping.Load() && died != nil {
				died(role, err)
			}
		}(workerRole(i))
		line, err := bufio.NewReader(ready).ReadString('\n')
		ready.Close()
		if strings.TrimSpace(line) != workerReady {
			p.kill()
			return nil, fmt.Errorf("worker %s (%s) exited before it was ready (%v); is %s right?", workerRole(i), self[0], err, SelfEnv)
		}
	}
	return p, nil
}

// pids returns the workers' process ids.
func (p *workerPool) pids() []int {
	var ids []int
	for _, c := range p.cmds {
		ids = append(ids, c.Process.Pid)
	}
	return ids
}

// stop sends SIGTERM to every worker and waits for all of them, however
// long that takes (a worker that ignores SIGTERM keeps the engine alive
// until someone sends SIGKILL, as a stuck vLLM worker does).
func (p *workerPool) stop() { p.signalAndWait(syscall.SIGTERM) }

// kill ends every worker with SIGKILL and waits for them.
func (p *workerPool) kill() { p.signalAndWait(syscall.SIGKILL) }

func (p *workerPool) signalAndWait(sig syscall.Signal) {
	if p == nil {
		return
	}
	p.stopping.Store(true)
	for _, c := range p.cmds {
		_ = c.Process.Signal(sig)
	}
	p.wg.Wait()
	if p.parent != nil {
		p.parent.Close()
	}
}

// runWorker is Main for a worker process: it does nothing until its engine
// dies (lifeline EOF), a signal ends it, or ctx ends.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	role := fs.String("role", "VLLM::Worker", "process role shown in logs")
	ignore := fs.Bool("ignore-sigterm", false, "ignore SIGTERM")
	fd := fs.Int("lifeline-fd", -1, "read end of the engine's lifeline pipe (-1: outlive the engine)")
	if err := fs.Parse(args); err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("sim-engine worker: %w", err)}
	}
	if *ignore {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(stdout, workerReady)
	parentGone := make(chan struct{})
	if *fd >= 0 {
		f := os.NewFile(uintptr(*fd), "lifeline")
		go func() {
			_, _ = io.Copy(io.Discard, f) // returns at EOF: the engine is gone
			close(parentGone)
		}()
	}
	select {
	case <-parentGone:
		fmt.Fprintf(stderr, "(%s pid=%d) engine process is gone; exiting\n", *role, os.Getpid())
	case <-ctx.Done():
	}
	return nil
}

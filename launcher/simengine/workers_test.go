package simengine_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/simengine"
)

// workersOf waits for n live children of the engine and returns them.
func workersOf(t *testing.T, p *engineProc, n int) []procInfo {
	t.Helper()
	var kids []procInfo
	p.eventually("worker children", func() bool {
		kids = childrenOf(t, p.cmd.Process.Pid)
		return len(kids) == n
	})
	return kids
}

// alive reports whether pid is a live, non-zombie process.
func alive(t *testing.T, pid int) bool {
	for _, q := range processes(t) {
		if q.pid == pid {
			return true
		}
	}
	return false
}

func TestWorkersShareGroupAndDieWithEngine(t *testing.T) {
	t.Parallel()
	p := start(t, "--tensor-parallel-size", "2", "--sim-workers", "-1") // default: one per TP rank
	pgid := p.cmd.Process.Pid
	kids := workersOf(t, p, 2)
	for _, k := range kids {
		if k.pgid != pgid {
			t.Errorf("worker %d in group %d, want the engine's %d", k.pid, k.pgid, pgid)
		}
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(k.pid) + "/cmdline")
		if !strings.Contains(string(cmdline), "VLLM::Worker_TP") {
			t.Errorf("worker %d cmdline %q lacks its role", k.pid, cmdline)
		}
	}
	// SIGKILL the engine alone: its workers notice and exit.
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitExit()
	groupEmpty(t, pgid)
}

func TestGracefulStopEndsWorkers(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-workers", "2")
	workersOf(t, p, 2)
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st := p.waitExit(); st.ExitCode() != 0 {
		t.Errorf("exit after SIGTERM = %v, want 0", st)
	}
	if !strings.Contains(p.stderr.String(), "Finished server process") {
		t.Errorf("no shutdown log:\n%s", p.stderr)
	}
	groupEmpty(t, p.cmd.Process.Pid)
}

func TestOrphanWorkersSurvive(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-workers", "2", "--sim-orphan-workers")
	pgid := p.cmd.Process.Pid
	kids := workersOf(t, p, 2)
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitExit()
	// Orphans never exit by themselves; check them once the engine is gone.
	for _, k := range kids {
		if !alive(t, k.pid) {
			t.Errorf("orphan worker %d died with the engine", k.pid)
		}
	}
	if len(inGroup(t, pgid)) != 2 {
		t.Errorf("group %d holds %v, want the 2 orphans", pgid, inGroup(t, pgid))
	}
	// Clean up as a launcher must: SIGKILL the whole group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	groupEmpty(t, pgid)
}

func TestWorkersIgnoringSIGTERMNeedSIGKILL(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-workers", "2", "--sim-worker-ignore-sigterm")
	pgid := p.cmd.Process.Pid
	kids := workersOf(t, p, 2)
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The engine shuts its server down, then waits for workers that never go.
	p.waitLog("Application shutdown complete.")
	select {
	case <-p.exited:
		t.Fatalf("engine exited (%v) although its workers ignore SIGTERM", p.state)
	default:
	}
	for _, k := range kids {
		if !alive(t, k.pid) {
			t.Errorf("worker %d died of SIGTERM", k.pid)
		}
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitExit()
	groupEmpty(t, pgid)
}

func TestWorkerDeathKillsEngineHealth(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-workers", "2")
	kids := workersOf(t, p, 2)
	if err := syscall.Kill(kids[0].pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitHealth(http.StatusServiceUnavailable)
	if status, _ := p.do(http.MethodPost, "/v1/chat/completions", "", textMessage("q", nil)); status != http.StatusServiceUnavailable {
		t.Errorf("chat on a dead engine = %d, want 503", status)
	}
	p.waitLog("died unexpectedly")
}

func TestMainInProcessStopsWithContext(t *testing.T) {
	t.Parallel()
	port := proctest.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr proctest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- simengine.Main(ctx, []string{"sim-model", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--sim-workers", "0"}, &stdout, &stderr)
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/health"
	poll(t, "in-process engine healthy", func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Main after cancel = %v, want nil", err)
	}
	if !strings.Contains(stderr.String(), "Finished server process") {
		t.Errorf("no shutdown log:\n%s", stderr.String())
	}
	if _, err := http.Get(url); err == nil {
		t.Error("still listening after Main returned")
	}
}

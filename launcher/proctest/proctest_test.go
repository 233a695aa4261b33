package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher"
)

// tailable returns a new empty file for `tail -f`, whose path marks the
// tail's command line; it skips the test where there is no tail.
func tailable(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("tail"); err != nil {
		t.Skip("no tail")
	}
	mark := filepath.Join(t.TempDir(), "tailed")
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return mark
}

// A child read right after exec.Cmd.Start is often still inside execve,
// its command line empty; Procs must see it all the same, or a leak check
// that runs at that moment passes on a live process.
func TestProcsSeesAChildRightAfterStart(t *testing.T) {
	mark := tailable(t)
	for i := range 200 {
		cmd := exec.Command("tail", "-f", mark)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		got := Procs(mark)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if len(got) != 1 || got[0].PID != cmd.Process.Pid || got[0].Flag("-f") != mark {
			t.Fatalf("start %d: Procs(%q) = %v, want the one child %d", i, mark, got, cmd.Process.Pid)
		}
	}
}

// Zombies are gone for a leak check: a child that exited but was not yet
// reaped is not listed.
func TestProcsSkipsZombies(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "zombie")
	cmd := exec.Command("sh", "-c", "exit 0", mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	for range 500 {
		st, err := launcher.ProcScanner{}.Stat(cmd.Process.Pid)
		if err == nil && !st.Live() {
			if got := Procs(mark); len(got) != 0 {
				t.Fatalf("a zombie was listed: %v", got)
			}
			return
		}
		if err != nil {
			t.Fatalf("child vanished before it was reaped: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("child never became a zombie")
}

// A process that carries the mark and belongs to a listed group is
// listed once; a group alone finds it too.
func TestMatchingListsEachProcessOnce(t *testing.T) {
	mark := tailable(t)
	cmd := exec.Command("tail", "-f", mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	group := map[int]bool{cmd.Process.Pid: true}
	for _, c := range []struct {
		mark   string
		groups map[int]bool
	}{{mark, group}, {"", group}, {mark, nil}} {
		got := Matching(c.mark, c.groups)
		if len(got) != 1 || got[0].PID != cmd.Process.Pid || got[0].PGID != cmd.Process.Pid {
			t.Errorf("Matching(%q, %v) = %v, want the child %d once", c.mark, c.groups, got, cmd.Process.Pid)
		}
	}
	if got := Matching("", nil); len(got) != 0 {
		t.Errorf("Matching with neither mark nor groups = %d processes, want none", len(got))
	}
}

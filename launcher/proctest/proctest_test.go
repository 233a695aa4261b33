package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A child read right after exec.Cmd.Start is often still inside execve,
// its command line empty; Procs must see it all the same, or a leak check
// that runs at that moment passes on a live process.
func TestProcsSeesAChildRightAfterStart(t *testing.T) {
	if _, err := exec.LookPath("tail"); err != nil {
		t.Skip("no tail")
	}
	mark := filepath.Join(t.TempDir(), "watched")
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
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
		st, ok := stat(cmd.Process.Pid)
		if ok && !st.live() {
			if got := Procs(mark); len(got) != 0 {
				t.Fatalf("a zombie was listed: %v", got)
			}
			return
		}
		if !ok {
			t.Fatal("child vanished before it was reaped")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("child never became a zombie")
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestASecondRunOnABusyRunFolderIsRefused: a second `npcorch run` on the
// folder of a run in progress went ahead (both started every engine, the
// journal answered each request twice). It is refused before it starts
// anything, naming the folder and the process holding it, and so is
// `npcorch score`, which rewrites the folder's score files; `npcorch
// status` still reads it. Once the run is killed (SIGKILL: no clean-up)
// the folder is free.
func TestASecondRunOnABusyRunFolderIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	file := writeCampaign(t, `tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle, --sim-load-time, 1m]}
`)
	cwd := t.TempDir()
	first := npcorchCmd(t, cwd, "run", "-c", file, "--out", "run")
	var out lockedBuffer
	first.Stdout, first.Stderr = &out, &out
	first.WaitDelay = 10 * time.Second
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		first.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		first.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "starting") {
		if time.Now().After(deadline) {
			t.Fatalf("the first run never started its engine:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	host, _ := os.Hostname()
	holder := fmt.Sprintf("is in use by npcorch run (pid %d on %s); wait for it or stop it", first.Process.Pid, host)
	code, text := npcorch(t, cwd, "run", "-c", file, "--out", "run", "--resume")
	if code != exitError || !strings.Contains(text, filepath.Join(cwd, "run")+" "+holder) {
		t.Errorf("a second run on the busy folder: exit %d, want %d and %q:\n%s", code, exitError, holder, text)
	}
	if strings.Contains(text, "starting") {
		t.Errorf("the refused run started an engine:\n%s", text)
	}
	code, text = npcorch(t, cwd, "score", "--run", "run")
	if code != exitError || !strings.Contains(text, "score: run "+holder) {
		t.Errorf("score of the busy folder: exit %d, want %d and %q:\n%s", code, exitError, holder, text)
	}
	if _, err := os.Stat(filepath.Join(cwd, "run", "scores.json")); err == nil {
		t.Error("the refused score wrote scores.json")
	}
	if code, text = npcorch(t, cwd, "status", "--run", "run"); code != 0 {
		t.Errorf("status of the busy folder: exit %d:\n%s", code, text)
	}

	first.Process.Kill()
	<-done
	if code, text = npcorch(t, cwd, "score", "--run", "run"); code != 0 {
		t.Errorf("score once the run was killed: exit %d (a stale lock?):\n%s", code, text)
	}
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/clinicare"
)

// toolsParentEnv makes the test binary a minimal npcorch parent that starts the tool server under the launcher,
// prints "PGID n" and waits to be killed (TestToolServerDiesWithItsParent).
const toolsParentEnv = "NPCORCH_TEST_TOOLS_PARENT"

// Issue 27: the tool server is "started and stopped by the same supervision that owns engines (no orphans)".
func TestToolServerUnderLauncherServesAndStopsClean(t *testing.T) {
	dir := toolsCorpus(t)
	cases, err := clinicare.LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var out strings.Builder
	spec := toolsChild(exe, append(os.Environ(), asNpcorch+"=1"), dir, filepath.Join(t.TempDir(), "calls.jsonl"), &out)
	spec.ReadyWithin = 60 * time.Second
	child, err := launcher.StartChild(context.Background(), spec)
	if err != nil {
		t.Fatalf("%v\nits output:\n%s", err, out.String())
	}
	pgid := child.PGID()
	if pids, _ := (launcher.ProcScanner{}).Members(pgid); len(pids) < 2 {
		t.Errorf("group %d: %v, want the shim and the tool server", pgid, pids)
	}
	c := cases[0]
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://%s/mcp?case=%s", child.Addr(), c.ID)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_labs", Arguments: map[string]any{"subject_id": c.SubjectID}})
	if err != nil || res.IsError {
		t.Fatalf("get_labs: %v %v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"table":"labevents"`) {
		t.Errorf("get_labs answered %.200s", text)
	}
	cs.Close()
	if err := child.Stop(); err != nil {
		t.Fatal(err)
	}
	if pids, err := (launcher.ProcScanner{}).Members(pgid); err != nil || len(pids) > 0 {
		t.Fatalf("after Stop, group %d still has %v (%v)", pgid, pids, err)
	}
}

func TestToolServerDiesWithItsParent(t *testing.T) {
	dir := toolsCorpus(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestToolsParentProcess$")
	cmd.Env = append(os.Environ(), toolsParentEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pgid := 0
	for sc := bufio.NewScanner(stdout); pgid == 0 && sc.Scan(); {
		if pg, ok := strings.CutPrefix(sc.Text(), "PGID "); ok {
			pgid, _ = strconv.Atoi(pg)
		} else {
			t.Logf("parent: %s", sc.Text())
		}
	}
	if pgid == 0 {
		t.Fatal("the parent printed no PGID")
	}
	if pids, _ := (launcher.ProcScanner{}).Members(pgid); len(pids) < 2 {
		t.Fatalf("group %d: %v, want the shim and the tool server", pgid, pids)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The shim sees its lifeline close, sends SIGTERM to the group, and SIGKILL after its grace.
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids, err := (launcher.ProcScanner{}).Members(pgid)
		if err == nil && len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the parent's SIGKILL, the tool server's group %d still has %v (%v)", pgid, pids, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestToolsParentProcess is the parent of TestToolServerDiesWithItsParent, run only with toolsParentEnv set.
func TestToolsParentProcess(t *testing.T) {
	dir := os.Getenv(toolsParentEnv)
	if dir == "" {
		return
	}
	exe, _ := os.Executable()
	env := append(os.Environ(), asNpcorch+"=1")
	spec := toolsChild(exe, env, dir, filepath.Join(os.TempDir(), fmt.Sprintf("npcorch-tools-parent-%d.jsonl", os.Getpid())), io.Discard)
	spec.ReadyWithin, spec.Grace = 60*time.Second, 2*time.Second
	child, err := launcher.StartChild(context.Background(), spec)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Printf("PGID %d\n", child.PGID())
	select {
	case <-child.Done():
		fmt.Println("ERROR the tool server exited on its own")
		os.Exit(1)
	case <-time.After(2 * time.Minute): // the test kills this process long before
		_ = child.Stop()
		os.Exit(1)
	}
}

// toolsCorpus writes the CliniCARE corpus of seed 1.
func toolsCorpus(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := synthClinicare(dir, 1, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	return dir
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/tasks/clinicare"
	"github.com/npcorch/npcorch/tasks/toolenv"
)

// TestSynthClinicareIsByteIdenticalPerSeed: "npcorch synth --clinicare writes it, byte-identical per seed".
func TestSynthClinicareIsByteIdenticalPerSeed(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{a, b} {
		if code, out := npcorch(t, ".", "synth", "--clinicare", "--out", dir, "--seed", "5"); code != 0 {
			t.Fatalf("synth --clinicare: exit %d: %s", code, out)
		}
	}
	if out, err := exec.Command("diff", "-r", a, b).CombinedOutput(); err != nil {
		t.Fatalf("two runs with --seed 5 differ:\n%s", out)
	}
	if code, out := npcorch(t, ".", "synth", "--clinicare", "--out", a); code == 0 || !strings.Contains(out, "not empty") {
		t.Fatalf("synth into a full folder: exit %d: %s", code, out)
	}
}

// TestToolsOverStdio starts `npcorch tools --case` as a child process and drives it with the official MCP
// client over stdio: tools/list, a call for the case's patient, a refused call for another, and the call log file.
func TestToolsOverStdio(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	if code, out := npcorch(t, ".", "synth", "--clinicare", "--out", dir); code != 0 {
		t.Fatalf("synth: %s", out)
	}
	cases, err := clinicare.LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := cases[0]
	logFile := filepath.Join(t.TempDir(), "calls.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := npcorchCmd(t, ".", "tools", "--records", dir, "--case", c.ID, "--log", logFile)
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := sess.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) < 16 {
		t.Fatalf("tools/list over stdio: %v, %v", tools, err)
	}
	for _, subject := range []string{c.SubjectID, cases[1].SubjectID} {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "list_encounters", Arguments: map[string]any{"subject_id": subject}})
		if err != nil || res.IsError != (subject != c.SubjectID) {
			t.Fatalf("list_encounters %s: isError=%v err=%v", subject, res.IsError, err)
		}
	}
	if err := sess.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the tool server is still running after its client closed stdin (an orphan)")
	}
	recs := readLog(t, logFile)
	if len(recs) != 2 || recs[0].Scope != toolenv.ScopeOK || recs[1].Scope != toolenv.ScopeViolation || recs[0].Case != c.ID {
		t.Fatalf("call log: %+v", recs)
	}
}

func readLog(t *testing.T, path string) []toolenv.CallRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []toolenv.CallRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r toolenv.CallRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestToolsFlagErrorsSayWhatToDo: a wrong tools command line fails with a message naming the fix.
func TestToolsFlagErrorsSayWhatToDo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	if code, out := npcorch(t, ".", "synth", "--clinicare", "--out", dir); code != 0 {
		t.Fatalf("synth: %s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "--records", dir}, "exactly one of --case (stdio) or --listen (HTTP)"},
		{[]string{"tools", "--records", dir, "--case", "x", "--listen", "127.0.0.1:0"}, "exactly one of"},
		{[]string{"tools", "--records", dir, "--case", "no-such-case"}, `no case "no-such-case"`},
		{[]string{"tools", "--records", t.TempDir(), "--case", "x"}, "npcorch synth --clinicare"},
		{[]string{"tools", "--records", dir, "--listen", "0.0.0.0:0"}, "reachable from other machines"},
	} {
		code, out := npcorch(t, ".", tc.args...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, output %q; want it to say %q", tc.args, code, out, tc.want)
		}
	}
}

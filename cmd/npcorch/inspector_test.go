package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/clinicare"
)

// inspectorPackage is the real outside MCP client the tool server is checked against, pinned.
const inspectorPackage = "@modelcontextprotocol/inspector@0.15.0"

// mcpInspector returns the mcp-inspector executable: $NPCORCH_MCP_INSPECTOR, or a copy installed with npm into
// the user cache (once; later runs reuse it). Without npm the test is skipped, naming the package.
func mcpInspector(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NPCORCH_MCP_INSPECTOR"); p != "" {
		return p
	}
	return filepath.Join(npmCached(t, "mcp-inspector-0.15.0", inspectorPackage), "node_modules", ".bin", "mcp-inspector")
}

// TestInspectorSeesTheTools: the official MCP inspector, in CLI mode, lists every tool with the schema the server
// defines and calls each one, getting byte for byte what the session returns in-process (issue 27: "mcp-inspector
// --cli lists and calls the tools").
func TestInspectorSeesTheTools(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the inspector test starts node and the server seven times")
	}
	insp := mcpInspector(t)
	dir := filepath.Join(t.TempDir(), "corpus")
	if code, out := npcorch(t, ".", "synth", "--clinicare", "--out", dir, "--seed", "1"); code != 0 {
		t.Fatalf("synth: %s", out)
	}
	cases, _ := clinicare.LoadCases(dir)
	c := cases[0]
	env, err := loadToolEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	cleanup, err := enableCompute(env, "", io.Discard) // as the child does: compute is listed where bwrap starts
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	exe, _ := os.Executable()
	server := []string{"--cli", "-e", asNpcorch + "=1", exe, "tools", "--records", dir, "--case", c.ID, "--log", filepath.Join(t.TempDir(), "calls.jsonl")}
	var listed struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	runInspector(t, insp, append(server, "--method", "tools/list"), &listed)
	schemas := map[string]json.RawMessage{}
	for _, tl := range listed.Tools {
		schemas[tl.Name] = tl.InputSchema
	}
	for _, ti := range env.Tools() {
		want, _ := json.Marshal(ti.Schema)
		if !jsonEqual(t, schemas[ti.Name], want) {
			t.Errorf("tools/list schema of %s as the inspector sees it:\n%s\nwant\n%s", ti.Name, schemas[ti.Name], want)
		}
	}
	if len(listed.Tools) != len(env.Tools()) {
		t.Fatalf("the inspector lists %d tools, the server defines %d", len(listed.Tools), len(env.Tools()))
	}
	sess, _ := env.Open("in-process", c.ID, 1, nil)
	for _, call := range inspectorCalls(c) {
		args := append([]string(nil), server...)
		args = append(args, "--method", "tools/call", "--tool-name", call.tool)
		raw := map[string]any{}
		for _, kv := range call.args {
			args = append(args, "--tool-arg", kv)
			k, v, _ := strings.Cut(kv, "=")
			raw[k] = v
			if n, err := strconv.Atoi(v); err == nil && k != "subject_id" {
				raw[k] = n
			}
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		runInspector(t, insp, args, &res)
		rawJSON, _ := json.Marshal(raw)
		want := sess.Call(call.tool, rawJSON)
		if len(res.Content) != 1 || res.Content[0].Text != string(want.JSON) || res.IsError != want.IsError {
			t.Errorf("%s %v through the inspector:\n%+v\nin process:\n%s", call.tool, call.args, res, want.JSON)
		}
	}
}

type inspectorCall struct {
	tool string
	args []string
}

func inspectorCalls(c clinicare.Case) []inspectorCall {
	s := "subject_id=" + c.SubjectID
	// One call per kind of argument and result (each inspector run starts node and the server, seconds on a
	// loaded 2-core machine); every tool's schema is checked through tools/list above.
	return []inspectorCall{
		{"get_labs", []string{s, "limit=3"}},
		{"get_orders", []string{s, "order_type=Radiology"}},
		{"search_notes", []string{s, "query=examination"}},
		{"read_note", []string{s, "note_id=" + c.SubjectID + "-DS-1", "to_line=6"}},
		{"policy_read", []string{"doc=aki-kdigo", "from_line=20", "to_line=27"}},
		{"get_labs", []string{"subject_id=10000001"}},
	}
}

func runInspector(t *testing.T, insp string, args []string, into any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, insp, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-inspector %s: %v\n%s\n%s", strings.Join(args[len(args)-4:], " "), err, out, stderr.String())
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("mcp-inspector output is not JSON: %v\n%s", err, out)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

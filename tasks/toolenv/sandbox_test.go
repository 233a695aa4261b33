package toolenv_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/toolenv"
)

func sandboxEnv(t *testing.T) (*toolenv.Env, string) {
	t.Helper()
	sb, err := toolenv.NewSandbox(t.TempDir())
	if err != nil {
		t.Skipf("no sandbox on this machine (the compute tool is absent, as designed): %v", err)
	}
	sb.Timeout = 3 * time.Second
	e, c := env(t)
	e.EnableSandbox(sb)
	return e, c.Cases[0].ID
}

func compute(t *testing.T, s *toolenv.Session, code string) toolenv.ComputeResult {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"code": code})
	res := s.Call("compute", raw)
	var out toolenv.ComputeResult
	if res.IsError || json.Unmarshal(res.JSON, &out) != nil {
		t.Fatalf("compute %q: %s", code, res.JSON)
	}
	return out
}

// TestSandboxHasNoNetworkAndNoRecords: "the sandbox has no network and cannot read the records (tests prove each)".
func TestSandboxHasNoNetworkAndNoRecords(t *testing.T) {
	e, caseID := sandboxEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	records := t.TempDir()
	if err := os.WriteFile(filepath.Join(records, "labevents.csv"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := e.Open("sbx", caseID, 1, nil)
	port := ln.Addr().(*net.TCPAddr).Port
	net := compute(t, s, fmt.Sprintf(`
import socket
try:
    socket.create_connection(("127.0.0.1", %d), timeout=3)
    print("CONNECTED")
except OSError as e:
    print("refused", type(e).__name__)
`, port))
	if strings.Contains(net.Stdout, "CONNECTED") || !strings.Contains(net.Stdout, "refused") {
		t.Fatalf("the sandbox reached a host socket: %+v", net)
	}
	read := compute(t, s, fmt.Sprintf(`
import os
for p in [%q, %q, "/root", "/work/../etc/passwd"]:
    print(p, os.path.exists(p))
`, filepath.Join(records, "labevents.csv"), records))
	if strings.Contains(read.Stdout, "True") {
		t.Fatalf("the sandbox sees the host's files:\n%s", read.Stdout)
	}
}

// TestSandboxScratchPersistsPerRun: a run's files stay in its own scratch across calls; another run does not see them.
func TestSandboxScratchPersistsPerRun(t *testing.T) {
	e, caseID := sandboxEnv(t)
	a, _ := e.Open("run-a", caseID, 1, nil)
	b, _ := e.Open("run-b", caseID, 1, nil)
	compute(t, a, `open("trend.txt", "w").write("1.2,1.5,2.0")`)
	got := compute(t, a, `print(open("trend.txt").read())`)
	if got.Stdout != "1.2,1.5,2.0\n" || len(got.Files) != 1 || got.Files[0].Name != "trend.txt" {
		t.Fatalf("second call of run a: %+v", got)
	}
	other := compute(t, b, `import os; print(sorted(os.listdir(".")))`)
	if other.Stdout != "[]\n" {
		t.Fatalf("run b sees run a's scratch: %s", other.Stdout)
	}
}

// TestSandboxStopsRunawayCode: every computation is bounded in time.
func TestSandboxStopsRunawayCode(t *testing.T) {
	e, caseID := sandboxEnv(t)
	s, _ := e.Open("spin", caseID, 1, nil)
	start := time.Now()
	res := s.Call("compute", []byte(`{"code":"while True: pass"}`))
	if !res.IsError || time.Since(start) > 13*time.Second {
		t.Fatalf("runaway code: %s after %s", res.JSON, time.Since(start))
	}
}

func TestNoSandboxWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := toolenv.NewSandbox(t.TempDir()); err == nil || !strings.Contains(err.Error(), "bubblewrap") {
		t.Fatalf("want a loud error naming bubblewrap, got %v", err)
	}
}

// TestSandboxHasTheAnalyticalLibraries: §3.2's shell has "pandas, numpy, and scipy"; where the host has them, the
// sandbox (read-only /usr) has them too.
func TestSandboxHasTheAnalyticalLibraries(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy, pandas, scipy").Run(); err != nil {
		t.Skip("python3-numpy, python3-pandas, python3-scipy are not installed (apt-get install them for the compute tool)")
	}
	e, caseID := sandboxEnv(t)
	s, _ := e.Open("libs", caseID, 1, nil)
	got := compute(t, s, "import numpy, pandas, scipy.stats; print(pandas.Series([1.0, 3.0]).mean())")
	if got.ExitCode != 0 || got.Stdout != "2.0\n" {
		t.Fatalf("analytical libraries in the sandbox: %+v", got)
	}
}

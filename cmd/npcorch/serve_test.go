package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/live"
)

// TestServeRunsTheSimEngineWithOneServe: `npcorch serve` of a sim model
// runs `npcorch sim-engine serve MODEL ...`, with serve once: the
// simulated engine, like vLLM, refuses a second positional.
func TestServeRunsTheSimEngineWithOneServe(t *testing.T) {
	eng, err := selfEngines("/usr/bin/npcorch").For(configs.EngineSim)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := eng.Invocation(launcher.Launch{Model: configs.Model{Name: "m", Engine: configs.Engine{Kind: configs.EngineSim}}, Port: 8000, APIKey: "npc-k"})
	if err != nil {
		t.Fatal(err)
	}
	serves := 0
	for _, a := range inv.Argv {
		if a == "serve" {
			serves++
		}
	}
	if serves != 1 || !slices.Equal(inv.Argv[:4], []string{"/usr/bin/npcorch", "sim-engine", "serve", "m"}) {
		t.Errorf("argv %q: want `npcorch sim-engine serve m ...` with one serve", inv.Argv)
	}
}

// TestServeKeepsTheCampaignsKeysFromItsEngine: `serve -c` hands the
// launcher the campaign's key variables (every model's api_key_env, the
// live page's token), which it keeps out of the engine's environment, as
// `run` does; before, only the providers' well-known names were dropped.
func TestServeKeepsTheCampaignsKeysFromItsEngine(t *testing.T) {
	raw, prep := smallDataset(t)
	file := filepath.Join(t.TempDir(), "c.yaml")
	src := fmt.Sprintf(`node: fake:a800-sxm-8
output: run
dataset: {raw: %s, prepared: %s}
models:
  - name: Lingshu-7B
    engine: {kind: sim}
  - name: remote
    params_b: 8
    engine: {kind: external, base_url: "http://127.0.0.1:9/v1", api_key_env: NPCORCH_TEST_REMOTE_KEY}
`, raw, prep)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sv, err := serveModel(file, "Lingshu-7B")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NPCORCH_TEST_REMOTE_KEY", live.TokenEnv} {
		if !slices.Contains(sv.secrets, want) {
			t.Errorf("secrets kept from the engine %q lack %s", sv.secrets, want)
		}
	}
}

// TestServeImportsNoBenchmark: `npcorch serve` starts engines for any
// workload; its file imports no tasks package (the benchmark, the
// campaign), and neither does anything it imports of ours (issue 26:
// serve imported the campaign for the engine backend and the secrets).
func TestServeImportsNoBenchmark(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "serve.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/npcorch/npcorch/"
	args := []string{"list", "-deps"}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasPrefix(path, module) {
			args = append(args, path)
		}
	}
	if len(args) == 2 {
		t.Fatal("serve.go imports nothing of ours; the test reads the wrong file")
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module+"tasks") {
			t.Errorf("serve.go's imports %q bring in %s", args[2:], dep)
		}
	}
}

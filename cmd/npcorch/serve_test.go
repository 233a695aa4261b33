package main

import (
	"slices"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
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

package configs

import (
	"strings"
	"testing"
)

// TestExtraArgsMustNotSetManagedFlags: a flag npcorch writes itself, given
// again in engine.extra_args (or engine.sim), is refused with its file,
// line and field, and the campaign field that sets it. Before, the engine
// kept the later one: a new-user trial put --allowed-local-media-path in
// extra_args, and --port there would have sent npcorch probing a port the
// engine does not listen on.
func TestExtraArgsMustNotSetManagedFlags(t *testing.T) {
	base := "output: o\ndataset: {raw: r, prepared: p}\nmodels:\n  - name: Lingshu-7B\n"
	for engine, want := range map[string]string{
		`{kind: vllm, extra_args: [--mm-encoder-tp-mode, data, --port, "9000"]}`: `c.yaml: line 5: field models[0].engine.extra_args[2]: model "Lingshu-7B": --port is a flag npcorch writes on the engine's command line`,
		`{kind: vllm, extra_args: [--max_num_seqs=64]}`:                          "--max_num_seqs is a flag npcorch writes on the engine's command line (the engine would keep the later one, unknown to npcorch); remove it: set it with engine.max_num_seqs instead",
		`{kind: sglang, extra_args: [--tp-size, "2"]}`:                           "remove it: set it with engine.tensor_parallel instead",
		`{kind: sim, sim: [--sim-policy, oracle, --served-model-name, x]}`:       "field models[0].engine.sim[2]",
	} {
		_, err := ParseCampaign("c.yaml", ".", []byte(base+"    engine: "+engine+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("engine %s:\n got %v\nwant it to contain %q", engine, err, want)
		}
	}
	// Flags npcorch leaves to the user stay allowed, for every kind.
	for _, engine := range []string{`{kind: vllm, extra_args: [--mm-encoder-tp-mode, data, --enforce-eager]}`,
		`{kind: sglang, extra_args: [--chunked-prefill-size, "4096"]}`, `{kind: sim, sim: [--sim-policy, oracle]}`,
		`{kind: wrapper, command: [serve.sh], extra_args: [--port, "{port}"]}`,
		`{kind: sim, sim: [--limit-mm-per-prompt, '{"image": 1}']}`} { // to simulate a smaller engine
		if _, err := ParseCampaign("c.yaml", ".", []byte(base+"    engine: "+engine+"\n"), nil); err != nil {
			t.Errorf("engine %s: %v", engine, err)
		}
	}
}

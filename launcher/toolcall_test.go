package launcher

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// loadToolParsers reads testdata/conformance/tool-parsers.tsv: the
// tool-call parser names each engine registers.
func loadToolParsers(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(conformanceDir, "tool-parsers.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		cols := strings.Split(l, "\t")
		if len(cols) != 4 {
			t.Fatalf("tool-parsers.tsv: %d columns in %q, want 4", len(cols), l)
		}
		out[cols[0]] = append(out[cols[0]], cols[1])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParserListsMatchConformanceTables: the names the registry accepts
// at load (configs/parsers.go) are the names the engines' source
// registers, as the conformance tables record them.
func TestParserListsMatchConformanceTables(t *testing.T) {
	tables := loadToolParsers(t)
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	for engine, list := range map[string][]string{"vllm": configs.VLLMToolCallParsers, "sglang": configs.SGLangToolCallParsers} {
		if got, want := sorted(list), sorted(tables[engine]); !slices.Equal(got, want) {
			t.Errorf("%s tool-call parsers:\n configs: %v\n table:   %v", engine, got, want)
		}
	}
	vllm := loadFlagTable(t, "vllm-serve-flags.tsv")
	if got, want := sorted(configs.VLLMReasoningParsers), sorted(vllm["--reasoning-parser"].Choices); !slices.Equal(got, want) {
		t.Errorf("vLLM reasoning parsers:\n configs: %v\n table:   %v", got, want)
	}
	for _, flag := range []string{"--enable-auto-tool-choice", "--tool-call-parser", "--tool-parser-plugin", "--chat-template", "--reasoning-parser"} {
		if _, ok := vllm[flag]; !ok {
			t.Errorf("vllm-serve-flags.tsv lacks %s", flag)
		}
	}
	if _, ok := loadFlagTable(t, "sglang-server-args.tsv")["--tool-call-parser"]; !ok {
		t.Error("sglang-server-args.tsv lacks --tool-call-parser")
	}
}

// parserModel is a registry-like vLLM model with tool-call parsers.
func parserModel() configs.Model {
	return configs.Model{Name: "GLM-5.2", HFID: "zai-org/GLM-5.2", AttentionHeads: 64, VocabSize: 151552, ContextLength: 202752, TextOnly: true,
		Engine: configs.Engine{Kind: configs.EngineVLLM, ReasoningParser: "glm45", ToolCallParser: configs.ToolCallParsers{VLLM: "glm47", SGLang: "glm47"}}}
}

// TestToolCallingCommandLines: golden command lines with tool calling on,
// and the same launch with it off carries no tool flag at all (the
// NPCBench command lines stay as they were). vLLM wants
// --enable-auto-tool-choice with --tool-call-parser
// (cli_args.py validate_parsed_serve_args); SGLang only the parser.
func TestToolCallingCommandLines(t *testing.T) {
	l := Launch{Model: parserModel(), GPUs: []string{"GPU-0"}, Port: 8000, APIKey: "k", SecretDir: "/run/npc/.keys", ToolCalling: true}
	inv, err := (VLLM{Binary: []string{"vllm"}}).Invocation(l)
	if err != nil {
		t.Fatal(err)
	}
	want := "vllm serve zai-org/GLM-5.2 --host 127.0.0.1 --port 8000 --served-model-name GLM-5.2 --tensor-parallel-size 1 --gpu-memory-utilization 0.9 --max-model-len 202752 --max-num-seqs 256 --generation-config vllm --enable-prompt-tokens-details --reasoning-parser glm45 --enable-auto-tool-choice --tool-call-parser glm47"
	if got := strings.Join(inv.Argv, " "); got != want {
		t.Errorf("vLLM:\n got  %s\n want %s", got, want)
	}
	sinv, err := (SGLang{Binary: []string{"python", "-m", "sglang.launch_server"}}).Invocation(l)
	if err != nil {
		t.Fatal(err)
	}
	if got := sinv.Argv[len(sinv.Argv)-4:]; !slices.Equal(got, []string{"--reasoning-parser", "glm45", "--tool-call-parser", "glm47"}) {
		t.Errorf("SGLang ends %q, want the reasoning then the tool-call parser", got)
	}
	l.ToolCalling = false
	for _, eng := range []Engine{VLLM{Binary: []string{"vllm"}}, SGLang{Binary: []string{"sglang"}}} {
		inv, err := eng.Invocation(l)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(inv.Argv, "--tool-call-parser") || slices.Contains(inv.Argv, "--enable-auto-tool-choice") {
			t.Errorf("tool calling off, yet %q", inv.Argv)
		}
	}
}

// TestToolCallingWithoutParserIsAConfigError: a campaign that needs tool
// calls cannot start a model with no parser for its engine; the error
// names the model and the field to set.
func TestToolCallingWithoutParserIsAConfigError(t *testing.T) {
	m := parserModel()
	m.Engine.ToolCallParser.SGLang = ""
	l := Launch{Model: m, GPUs: []string{"GPU-0"}, Port: 8000, APIKey: "k", SecretDir: "/run/npc/.keys", ToolCalling: true}
	if _, err := (VLLM{Binary: []string{"vllm"}}).Invocation(l); err != nil {
		t.Fatalf("vLLM has its parser: %v", err)
	}
	_, err := (SGLang{Binary: []string{"sglang"}}).Invocation(l)
	if err == nil || !strings.Contains(err.Error(), "GLM-5.2") || !strings.Contains(err.Error(), "engine.tool_call_parser.sglang") {
		t.Fatalf("SGLang without a parser: %v", err)
	}
}

// TestShippedToolCallingCommandLinesConform: every shipped model that
// names a tool-call parser, started with tool calling, gives command
// lines vLLM's and SGLang's parsers accept, with a parser name each
// engine registers (testdata/conformance/tool-parsers.tsv).
func TestShippedToolCallingCommandLinesConform(t *testing.T) {
	vllm := loadFlagTable(t, "vllm-serve-flags.tsv")
	sglang := loadFlagTable(t, "sglang-server-args.tsv")
	names := loadToolParsers(t)
	checked := 0
	for where, m := range shippedModels(t) {
		p := m.Engine.ToolCallParser
		if m.Engine.Kind != configs.EngineVLLM || p.VLLM == "" {
			continue
		}
		l := Launch{Model: m, GPUs: []string{"GPU-0", "GPU-1"}, Port: 8000, APIKey: "k", SecretDir: "/run/npc/.keys", ToolCalling: true,
			Images: ImageLimits{Count: 1, Width: 512, Height: 512}}
		l.Model.Engine.TensorParallel = 0
		inv, err := (VLLM{Binary: []string{"vllm"}}).Invocation(l)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if err := checkServeArgv(vllm, inv.Argv, 0); err != nil {
			t.Errorf("%s: vllm serve would refuse %q: %v", where, inv.Argv, err)
		}
		if i := slices.Index(inv.Argv, "--tool-call-parser"); i < 0 || !slices.Contains(names["vllm"], inv.Argv[i+1]) || !slices.Contains(inv.Argv, "--enable-auto-tool-choice") {
			t.Errorf("%s: vLLM's tool flags missing or a parser vLLM does not register: %q", where, inv.Argv)
		}
		if p.SGLang != "" {
			l.Model.Engine.Kind, l.Model.Engine.ExtraArgs = configs.EngineSGLang, nil
			sinv, err := (SGLang{Binary: []string{"python", "-m", "sglang.launch_server"}}).Invocation(l)
			if err != nil {
				t.Errorf("%s: SGLang: %v", where, err)
				continue
			}
			if err := checkFlags(sglang, sinv.Argv[3:]); err != nil {
				t.Errorf("%s: SGLang would refuse %q: %v", where, sinv.Argv, err)
			}
			if i := slices.Index(sinv.Argv, "--tool-call-parser"); i < 0 || !slices.Contains(names["sglang"], sinv.Argv[i+1]) {
				t.Errorf("%s: SGLang's parser missing or not registered: %q", where, sinv.Argv)
			}
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("%d shipped models with a tool-call parser checked; the registry has the paper's six open-weight models", checked)
	}
}

// vllmParserRefusal is what `vllm serve` prints and then exits 1 with when
// --tool-call-parser names a parser it does not register: the traceback
// of validate_api_server_args (vllm/entrypoints/openai/api_server.py
// @048027fbbdb8c252560205a6159ba3288ede291e), whose KeyError message is
// f"invalid tool call parser: {args.tool_call_parser} (chose from { ... })";
// Python prints a KeyError's argument with repr, hence the quotes.
const vllmParserRefusal = `INFO 12-06 06:00:00 [api_server.py:1] vLLM API server version 0.19.1
Traceback (most recent call last):
  File "/opt/venv/bin/vllm", line 10, in <module>
    sys.exit(main())
  File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 1220, in setup_server
    validate_api_server_args(args)
  File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 1190, in validate_api_server_args
    raise KeyError(
KeyError: 'invalid tool call parser: qwen25 (chose from { deepseek_v3,deepseek_v31,glm45,hermes,kimi_k2,qwen3_coder,qwen3_xml })'`

func TestClassifyParserRefusals(t *testing.T) {
	for _, line := range []string{
		"KeyError: 'invalid tool call parser: qwen25 (chose from { deepseek_v3,hermes })'",
		"KeyError: 'invalid reasoning parser: qwen25 (chose from { deepseek_r1,qwen3 })'",
		"TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser",
	} {
		if got, hint := Classify([]string{"Traceback (most recent call last):", line}, FailureExited); got != FailureParser || !strings.Contains(hint, "tool_call_parser") {
			t.Errorf("Classify(%q) = %s %q, want %s", line, got, hint, FailureParser)
		}
	}
	if !FailureParser.Permanent() {
		t.Error("an unknown parser is the model's configuration; no restart fixes it")
	}
}

// TestUnknownToolParserAtStartIsConfigurationNotRestarted: an engine that
// exits at start-up with vLLM's "invalid tool call parser" KeyError is a
// configuration failure of the model: permanent, reported once with
// vLLM's message, never restarted (MaxRestarts would allow restarts).
func TestUnknownToolParserAtStartIsConfigurationNotRestarted(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-vllm")
	body := "#!/bin/sh\ncat >&2 <<'EOF'\n" + vllmParserRefusal + "\nEOF\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	sup := NewSupervisor(cfg)
	defer stopAll(t, sup)
	sub := sup.Subscribe()
	defer sub.Close()
	m := simModel("badparser")
	m.Engine.Command = []string{script}
	m.Engine.ToolCallParser.VLLM = "qwen25" // a name only SGLang registers
	_, err := startOne(t, sup, ReplicaSpec{Model: m, ToolCalling: true})
	var ee *EngineError
	if !errors.As(err, &ee) || ee.Kind != FailureParser || !IsPermanent(err) {
		t.Fatalf("start error %v, want a permanent %s failure", err, FailureParser)
	}
	if !strings.Contains(err.Error(), "invalid tool call parser: qwen25") {
		t.Errorf("the error lacks vLLM's message:\n%v", err)
	}
	starts := 0
	for ev := range sub.C {
		if ev.Kind == ReplicaStarting {
			starts++
		}
		if ev.Kind == ReplicaFailed {
			break
		}
	}
	if starts != 1 {
		t.Errorf("%d starts, want 1", starts)
	}
}

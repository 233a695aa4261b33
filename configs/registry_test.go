package configs

import (
	"reflect"
	"strings"
	"testing"
)

func TestDefaultRegistry(t *testing.T) {
	r, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	var local, text, clinicare []string
	for _, name := range r.Names() {
		m, _ := r.Get(name)
		if m.Benchmark == BenchmarkCliniCARE {
			clinicare = append(clinicare, name)
			continue // TestCliniCAREModels
		}
		if m.TextOnly {
			text = append(text, name)
		}
		if m.Engine.Kind != EngineExternal {
			local = append(local, name)
			if m.WeightBytes <= 0 || m.AttentionHeads <= 0 || m.KVHeads <= 0 || m.VocabSize <= 0 || m.HFID == "" {
				t.Errorf("%s: missing weights, heads, vocabulary or Hugging Face id", name)
			}
			if m.TextOnly == (m.VisionHeads > 0) {
				t.Errorf("%s: text_only %v with %d vision heads", name, m.TextOnly, m.VisionHeads)
			}
		}
		for task := range r.Defaults.Tasks {
			if m.Tasks[task].MaxTokens <= 0 {
				t.Errorf("%s: task %s has no output budget after defaults", name, task)
			}
		}
	}
	if got := len(r.Models) - len(clinicare); got != 30 {
		t.Fatalf("registry has %d NPCBench models, want the paper's 30 (Table A7)", got)
	}
	if len(local) != 23 {
		t.Errorf("%d local models, want the paper's 23 (15 multimodal, 8 text): %v", len(local), local)
	}
	// Table A7: "Medical-Specific LLMs" and "Open-Source LLMs", input
	// interface "Text".
	wantText := []string{"HuatuoGPT-o1-72B", "HuatuoGPT-o1-7B", "Baichuan-M2-32B", "Fleming-R1-32B", "Fleming-R1-7B",
		"Qwen3-30B-A3B", "GPT-OSS-20B", "GPT-OSS-120B", "DeepSeek-V3.1"}
	if !reflect.DeepEqual(text, wantText) {
		t.Errorf("text-only models %v, want Table A7's %v", text, wantText)
	}
	intern, _ := r.Get("InternVL3.5-38B")
	if got := intern.Tasks["t_groups"].MaxImages; got != 35 {
		t.Errorf("InternVL3.5 t_groups max_images = %d, want 35 (Appendix C)", got)
	}
	gpt, _ := r.Get("GPT-4.1")
	if got := gpt.Tasks["n_groups"]; got.MaxImages != 50 || got.MaxTokens != 4096 {
		t.Errorf("GPT-4.1 n_groups = %+v, want 50 images and 4096 tokens", got)
	}
	if got := gpt.Tasks["card"].MaxTokens; got != 1024 {
		t.Errorf("GPT-4.1 card max_tokens = %d, want the default 1024", got)
	}
	// "Fleming-R1-7B allows up to 16,384 within its 32,768-token context"
	// (Appendix C).
	if fl, _ := r.Get("Fleming-R1-7B"); fl.ContextLength != 32768 {
		t.Errorf("Fleming-R1-7B context %d, want the paper's 32,768", fl.ContextLength)
	}
	for _, name := range []string{"GPT-OSS-20B", "GPT-OSS-120B"} {
		if m, _ := r.Get(name); m.Engine.ReasoningParser != "openai_gptoss" || !m.MoE {
			t.Errorf("%s: reasoning parser %q, moe %v; want vLLM's openai_gptoss and moe", name, m.Engine.ReasoningParser, m.MoE)
		}
	}
	if m, _ := r.Get("Qwen3-30B-A3B"); m.Engine.ReasoningParser != "qwen3" {
		t.Errorf("Qwen3-30B-A3B reasoning parser %q, want qwen3", m.Engine.ReasoningParser)
	}
}

// TestTextOnlyModelWithImageSettingsIsRefused: a text-only model that also
// describes a vision tower or image processing is a contradiction the
// loader names, with the file, line and field.
func TestTextOnlyModelWithImageSettingsIsRefused(t *testing.T) {
	for in, want := range map[string]string{
		"models:\n  - name: T\n    text_only: true\n    vision_heads: 16\n    engine: {kind: sim}\n":                     `reg.yaml: line 4: field models[0].vision_heads: model "T" is text_only but has a vision tower of 16 heads`,
		"models:\n  - name: T\n    text_only: true\n    engine: {kind: sim}\n    mm_processor_kwargs: {max_pixels: 9}\n": `reg.yaml: line 5: field models[0].mm_processor_kwargs: model "T" is text_only`,
	} {
		_, err := ParseRegistry("reg.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRegistry(%q):\n got %v\nwant it to contain %q", in, err, want)
		}
	}
	if _, err := ParseRegistry("reg.yaml", []byte("models:\n  - name: T\n    text_only: true\n    engine: {kind: sim}\n")); err != nil {
		t.Errorf("a plain text-only model: %v", err)
	}
}

func TestRegistryErrorsNameFileLineField(t *testing.T) {
	cases := map[string]string{
		"models:\n  - name: A\n    engine: {kind: vllm}\n":                                      "reg.yaml: line 2: field models[0].hf_id:",
		"models:\n  - name: A\n    engine: {kind: warp}\n":                                      `reg.yaml: line 3: field models[0].engine.kind: model "A": unknown engine kind "warp"`,
		"models:\n  - name: A\n    engine: {kind: external}\n":                                  "reg.yaml: line 3: field models[0].engine.base_url:",
		"models:\n  - name: A\n    engine: {kind: external, base_url: \"localhost:8000\"}\n":    `reg.yaml: line 3: field models[0].engine.base_url: model "A": "localhost:8000" has no http:// or https:// scheme and host; want an http:// or https:// URL ending in /v1`,
		"models:\n  - name: A\n    engine: {kind: external, base_url: \"http://\"}\n":           `field models[0].engine.base_url: model "A": "http://" has no http:// or https:// scheme and host`,
		"models:\n  - name: A\n    engine: {kind: external, base_url: \"http://h:1/v1?x=1\"}\n": `field models[0].engine.base_url: model "A": "http://h:1/v1?x=1" has a query`,
		"models:\n  - name: A\n    engine: {kind: sim, api_model: a-1}\n":                       `reg.yaml: line 3: field models[0].engine.api_model: model "A": api_model names the model of an external endpoint`,
		"models:\n  - name: A\n    engine: {kind: sim}\n  - name: A\n    engine: {kind: sim}\n": `line 4: field models[1].name: model "A" is listed twice`,
		"models:\n  - name: A\n    engine: {kind: sim}\n    tasks: {card: {max_tokens: -1}}\n":  `reg.yaml: line 4: field models[0].tasks.card: negative limits`,
		"models:\n  - name: A\n    enigne: {kind: sim}\n":                                       "reg.yaml: line 3: field enigne not found",
		"models: [\n": "reg.yaml: line 1: did not find expected node content",
		"":            "reg.yaml: the file is empty",
	}
	for in, want := range cases {
		_, err := ParseRegistry("reg.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRegistry(%q):\n got %v\nwant it to contain %q", in, err, want)
		}
	}
}

// TestRegistryTaskRefsNameFileLineField: configs owns no task list; it
// records where each task key is written, for the tasks' registry to
// check (tasks/npcbench tests the errors).
func TestRegistryTaskRefsNameFileLineField(t *testing.T) {
	r, err := ParseRegistry("reg.yaml", []byte("defaults:\n  tasks:\n    pathology: {max_tokens: 9}\nmodels:\n  - name: A\n    engine: {kind: sim}\n    tasks: {stageing: {}, card: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskRef{{Key: "pathology", File: "reg.yaml", Line: 3, Field: "defaults.tasks.pathology"},
		{Key: "card", File: "reg.yaml", Line: 7, Field: "models[0].tasks.card"},
		{Key: "stageing", File: "reg.yaml", Line: 7, Field: "models[0].tasks.stageing"}}
	if !reflect.DeepEqual(r.TaskRefs, want) {
		t.Errorf("task refs %+v, want %+v", r.TaskRefs, want)
	}
	if err := r.TaskRefs[2].Errorf("unknown task %q", "stageing"); err.Error() != `reg.yaml: line 7: field models[0].tasks.stageing: unknown task "stageing"` {
		t.Errorf("error %q", err)
	}
}

// TestEngineCommandConvention: engine.command is the executable alone;
// one ending in "serve" would run `vllm serve serve MODEL`, which vLLM's
// parser rejects, so the loader refuses it and says what to write.
func TestEngineCommandConvention(t *testing.T) {
	head := "models:\n  - name: A\n    hf_id: org/a\n    attention_heads: 8\n    vocab_size: 64\n"
	cases := map[string]string{
		head + "    engine: {kind: vllm, command: [/opt/v/bin/vllm, serve]}\n":                             `reg.yaml: line 6: field models[0].engine.command: model "A": the command ends in "serve", but npcorch adds ` + "`serve MODEL`" + ` itself; write the executable alone: ["/opt/v/bin/vllm"]`,
		head + "    engine:\n      kind: sim\n      command: [npcorch, sim-engine, serve]\n":               `line 8: field models[0].engine.command: model "A": the command ends in "serve"`,
		head + "    engine: {kind: wrapper, command: [python, s.py, --key, \"{api_key}\"]}\n":              `line 6: field models[0].engine.command[3]: model "A": {api_key} would put the API key on the wrapper's command line`,
		head + "    engine: {kind: wrapper, command: [python, s.py], extra_args: [\"--key={api_key}\"]}\n": "field models[0].engine.extra_args[0]",
		head + "    engine: {kind: vllm, version: latest}\n":                                               `line 6: field models[0].engine.version: model "A": "latest" is not a release`,
	}
	for in, want := range cases {
		_, err := ParseRegistry("reg.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRegistry(%q):\n got %v\nwant it to contain %q", in, err, want)
		}
	}
	for _, ok := range []string{
		head + "    engine: {kind: vllm, command: [/opt/v/bin/vllm]}\n",
		head + "    engine: {kind: vllm, command: [/opt/v/bin/python, -m, vllm.entrypoints.cli.main], version: 0.8.5.post1}\n",
		head + "    engine: {kind: wrapper, command: [python, s.py, --port, \"{port}\"]}\n",
	} {
		if _, err := ParseRegistry("reg.yaml", []byte(ok)); err != nil {
			t.Errorf("ParseRegistry(%q): %v", ok, err)
		}
	}
}

func TestParseRelease(t *testing.T) {
	for in, want := range map[string]Release{"0.19.1": {0, 19, 1}, "v0.9": {0, 9, 0}, "0.8.5.post1": {0, 8, 5}, "0.10.1rc2": {0, 10, 1}, "0.11rc1": {0, 11, 0}} {
		got, err := ParseRelease(in)
		if err != nil || got != want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1", "latest", "0..1", "a.b", "-1.2"} {
		if _, err := ParseRelease(bad); err == nil {
			t.Errorf("ParseRelease(%q) accepted", bad)
		}
	}
	if !(Engine{}).Supports(MustRelease(ReferenceVLLM)) || (Engine{Version: "0.8.5"}).Supports(MustRelease("0.9.0")) {
		t.Error("Supports: the empty version must be the reference release, and 0.8.5 is before 0.9.0")
	}
}

// TestServedNameOfAnExternalModelIsItsAPIModel: an API model's requests
// carry the endpoint's own model id, which /v1/models lists ("gpt-4.1"),
// not npcorch's registry name ("GPT-4.1"); npcorch's own engines serve
// the registry name. Before, every API request named the registry entry.
func TestServedNameOfAnExternalModelIsItsAPIModel(t *testing.T) {
	reg, err := ParseRegistry("reg.yaml", []byte("models:\n  - name: GPT-4.1\n    engine: {kind: external, base_url: 'http://x/v1', api_model: gpt-4.1}\n"+
		"  - name: Plain\n    engine: {kind: external, base_url: 'http://x/v1'}\n  - name: S\n    engine: {kind: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"GPT-4.1": "gpt-4.1", "Plain": "Plain", "S": "S"} {
		if m, _ := reg.Get(name); m.ServedName() != want {
			t.Errorf("%s serves %q, want %q", name, m.ServedName(), want)
		}
	}
	def, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range def.Names() {
		m, _ := def.Get(name)
		if m.Engine.Kind == EngineExternal && m.Engine.APIModel == "" {
			t.Errorf("API model %s has no engine.api_model: its endpoint would be asked for a model named %q", m.Name, m.Name)
		}
	}
}

// TestPaperOutputAllowances: each model's output allowance per task is the
// paper's (Appendix C). "For L5 primary and paired history evaluations,
// GPT-OSS-20B allows 16,384 output tokens and HealthGPT-Pro-4B 32,768.
// Fleming-R1-7B allows up to 16,384 within its 32,768-token context; each
// matched history/snapshot/shuffled triplet uses the same output
// allowance." "CarePath evaluation uses maximum output lengths of 1,024
// tokens for local models and 8,192 for API models" (the L6 controls
// included). The paper states no allowance for L1, L2 and L4, nor another
// model's L5: ours are the defaults (1,024; 8,192).
func TestPaperOutputAllowances(t *testing.T) {
	r, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	l5 := []string{"l_rev", "l_rev_snapshot", "l_rev_shuffled", "l_rev_serial"}
	l5Want := map[string]int{"GPT-OSS-20B": 16384, "HealthGPT-Pro-4B": 32768, "Fleming-R1-7B": 16384}
	care := []string{"cp_care", "cp_care_own_findings", "cp_care_ref_findings", "cp_care_no_findings", "cp_care_serial"}
	for _, name := range r.Names() {
		m, _ := r.Get(name)
		for _, task := range l5 {
			want := 8192
			if v, ok := l5Want[name]; ok {
				want = v
			}
			if got := m.Tasks[task].MaxTokens; got != want {
				t.Errorf("%s %s: max_tokens %d, want %d", name, task, got, want)
			}
		}
		for _, task := range []string{"g_mem", "a_app", "c_plan"} {
			if got := m.Tasks[task].MaxTokens; got != 1024 {
				t.Errorf("%s %s: max_tokens %d, want 1024", name, task, got)
			}
		}
		if m.TextOnly {
			continue
		}
		want := 1024
		if m.Engine.Kind == EngineExternal {
			want = 8192
		}
		for _, task := range care {
			if got := m.Tasks[task].MaxTokens; got != want {
				t.Errorf("%s %s: max_tokens %d, want %d", name, task, got, want)
			}
		}
	}
	if fl, _ := r.Get("Fleming-R1-7B"); fl.Tasks["l_rev"].MaxTokens >= fl.ContextLength {
		t.Errorf("Fleming-R1-7B: L5 allowance %d leaves no room in its %d context", fl.Tasks["l_rev"].MaxTokens, fl.ContextLength)
	}
}

// TestCliniCAREModels: CliniCARE-Bench §6.1 "six open-weight models on a
// single model-agnostic harness" (Table 3's opencode rows), each with what
// the planner and the launcher need: weights, heads, vocabulary, context,
// and a tool-call parser for vLLM and SGLang, marked verify (none of
// their config.json files was read).
func TestCliniCAREModels(t *testing.T) {
	r, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range r.Names() {
		m, _ := r.Get(name)
		if m.Benchmark != BenchmarkCliniCARE {
			continue
		}
		got = append(got, name)
		if m.WeightBytes <= 0 || m.AttentionHeads <= 0 || m.VocabSize <= 0 || m.ContextLength <= 0 || m.HFID == "" || !m.TextOnly || m.Engine.Kind != EngineVLLM {
			t.Errorf("%s: missing weights, heads, vocabulary, context or Hugging Face id, or not a text model on vLLM: %+v", name, m)
		}
		if m.Engine.ToolCallParser.VLLM == "" || m.Engine.ToolCallParser.SGLang == "" || m.Engine.ReasoningParser == "" {
			t.Errorf("%s: tool-call parsers %+v, reasoning parser %q; want all three", name, m.Engine.ToolCallParser, m.Engine.ReasoningParser)
		}
		if !strings.Contains(m.Notes, "verify") {
			t.Errorf("%s: notes do not say verify: %q", name, m.Notes)
		}
	}
	want := []string{"DeepSeek-V4-Pro", "DeepSeek-V4-Flash", "GLM-5.2", "Qwen-3.7-Plus", "MiniMax-M3", "Kimi-K2.7-Code"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CliniCARE models %v, want Table 3's %v", got, want)
	}
}

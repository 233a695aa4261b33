package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/simengine"
)

// conformanceDir holds the tables written from vLLM's and SGLang's own
// source (each file's header names the files and commits read).
const conformanceDir = "../testdata/conformance"

// flagSpec is one row of a flag table.
type flagSpec struct {
	Name, Kind string
	Choices    []string // nil: none; ["?"]: not read
}

// flagTable maps every flag name and alias to its row.
type flagTable map[string]flagSpec

func loadFlagTable(t *testing.T, name string) flagTable {
	t.Helper()
	f, err := os.Open(filepath.Join(conformanceDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := flagTable{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 5 || !strings.HasPrefix(cols[0], "--") {
			t.Fatalf("%s:%d: want 5 tab-separated columns starting with a flag, got %q", name, n, line)
		}
		spec := flagSpec{Name: cols[0], Kind: cols[2]}
		if cols[3] != "-" {
			spec.Choices = strings.Split(cols[3], ",")
		}
		table[cols[0]] = spec
		if cols[1] != "-" {
			for _, a := range strings.Split(cols[1], ",") {
				table[a] = spec
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return table
}

// takesValue says whether a flag of kind k is followed by a value.
func takesValue(k string) bool { return k != "bool" && k != "store_true" }

// checkFlags checks args (flags only) against table as argparse would:
// every flag exists, has a value when it takes one, and the value is of
// its kind and within its choices.
func checkFlags(table flagTable, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return fmt.Errorf("unrecognized arguments: %s", a)
		}
		name, inline, hasInline := strings.Cut(a, "=")
		spec, ok := table[name]
		if !ok && strings.HasPrefix(name, "--no-") {
			if s, found := table["--"+strings.TrimPrefix(name, "--no-")]; found && s.Kind == "bool" {
				continue
			}
		}
		if !ok {
			return fmt.Errorf("unrecognized arguments: %s", name)
		}
		if !takesValue(spec.Kind) {
			if hasInline {
				return fmt.Errorf("argument %s: ignored explicit argument %q", name, inline)
			}
			continue
		}
		var values []string
		switch {
		case hasInline:
			values = []string{inline}
		case strings.HasSuffix(spec.Kind, "+"):
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				values = append(values, args[i])
			}
		case spec.Kind == "str?":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				values = []string{args[i]}
			}
			continue
		case i+1 < len(args):
			i++
			values = []string{args[i]}
		}
		if len(values) == 0 {
			return fmt.Errorf("argument %s: expected %s", name, map[bool]string{true: "at least one argument", false: "one argument"}[strings.HasSuffix(spec.Kind, "+")])
		}
		for _, v := range values {
			if err := checkValue(spec, v); err != nil {
				return fmt.Errorf("argument %s: %w", name, err)
			}
		}
	}
	return nil
}

var humanInt = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[kKmMgGtT]?$`)

func checkValue(spec flagSpec, v string) error {
	switch strings.TrimSuffix(spec.Kind, "+") {
	case "int":
		if _, err := strconv.Atoi(v); err != nil {
			return fmt.Errorf("invalid int value: %q", v)
		}
	case "float":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("invalid float value: %q", v)
		}
	case "human-int":
		if !humanInt.MatchString(v) {
			return fmt.Errorf("invalid human-readable int: %q", v)
		}
	case "human-int-or-auto":
		if v != "auto" && v != "-1" && !humanInt.MatchString(v) {
			return fmt.Errorf("invalid human-readable int or auto: %q", v)
		}
	case "json", "dataclass-json":
		if !json.Valid([]byte(v)) {
			return fmt.Errorf("invalid JSON: %q", v)
		}
	case "limit-mm":
		return checkLimitMM(v)
	case "choice":
		if slices.Equal(spec.Choices, []string{"?"}) {
			return fmt.Errorf("its choices were not read from the source: read them into the table before npcorch passes it")
		}
		if !slices.Contains(spec.Choices, v) {
			return fmt.Errorf("invalid choice: %q (choose from %s)", v, strings.Join(spec.Choices, ", "))
		}
	case "yaml-file":
		if ext := filepath.Ext(v); ext != ".yaml" && ext != ".yml" {
			return fmt.Errorf("config file must be YAML, got %q", v)
		}
	}
	return nil
}

// checkLimitMM checks --limit-mm-per-prompt as vLLM's MultiModalConfig
// validates it (vllm/config/multimodal.py, testdata/conformance).
func checkLimitMM(v string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return fmt.Errorf("not a JSON object: %q", v)
	}
	allowed := map[string][]string{"image": {"count", "width", "height"}, "video": {"count", "num_frames", "width", "height"},
		"audio": {"count", "length"}}
	for modality, raw := range m {
		var n int
		if json.Unmarshal(raw, &n) == nil {
			if n < 0 {
				return fmt.Errorf("%s: count %d < 0", modality, n)
			}
			continue
		}
		var opts map[string]int
		if err := json.Unmarshal(raw, &opts); err != nil {
			return fmt.Errorf("%s: %s is neither a count nor an object of integer options", modality, raw)
		}
		keys, ok := allowed[modality]
		if !ok {
			keys = []string{"count"}
		}
		for k, x := range opts {
			switch {
			case !slices.Contains(keys, k):
				return fmt.Errorf("%s: unknown option %q (extra fields forbidden)", modality, k)
			case k == "count" && x < 0, k != "count" && x <= 0:
				return fmt.Errorf("%s: %s = %d is out of range", modality, k, x)
			}
		}
	}
	return nil
}

// shippedModels are the models of the embedded registry and of every
// campaign file in configs/campaigns, resolved as npcorch resolves them.
func shippedModels(t *testing.T) map[string]configs.Model {
	t.Helper()
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]configs.Model{}
	for _, name := range reg.Names() {
		m, _ := reg.Get(name)
		out["models.yaml/"+name] = m
	}
	files, err := filepath.Glob("../configs/campaigns/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign files: %v", err)
	}
	for _, f := range files {
		c, err := configs.LoadCampaign(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Resolved {
			out[filepath.Base(f)+"/"+m.Name] = m
		}
	}
	return out
}

// launchVariants are the launches npcorch makes of m: with and without a
// media root, one or several API servers, one or two GPUs, a reasoning
// parser and trust-remote-code on and off.
func launchVariants(m configs.Model) []Launch {
	var out []Launch
	for _, media := range []string{"", "/data/npcbench/prepared"} {
		for _, gpus := range [][]string{{"GPU-0"}, {"GPU-0", "GPU-1"}} {
			for _, servers := range []int{1, 3} {
				for _, flip := range []bool{false, true} {
					mm := m
					if m.Engine.TensorParallel > 0 && m.Engine.TensorParallel != len(gpus) {
						continue
					}
					if flip {
						mm.Engine.TrustRemoteCode = !mm.Engine.TrustRemoteCode
						if mm.Engine.ReasoningParser == "" {
							mm.Engine.ReasoningParser = "qwen3"
						}
					}
					if servers > 1 && !(mm.Engine.Kind == configs.EngineSim || mm.Engine.Supports(configs.VLLMAPIServerCount)) {
						continue // placement never asks it (placement.ScalesAPIServers)
					}
					out = append(out, Launch{Model: mm, GPUs: gpus, Port: 8000, APIKey: "npc-k", MediaRoot: media,
						Images: ImageLimits{Count: 80, Width: 512, Height: 1644}, APIServers: servers, SecretDir: "/run/npc/.keys"})
				}
			}
		}
	}
	return out
}

// TestCommandLinesConformToVLLMAndSGLang builds every command line npcorch
// would run for every shipped model and campaign and parses it as vLLM's
// (or SGLang's) own parser would, from the flag tables of
// testdata/conformance: one positional (the model) after `serve`, only
// flags that exist, values of their type and within their choices, JSON
// where JSON is wanted.
func TestCommandLinesConformToVLLMAndSGLang(t *testing.T) {
	vllm := loadFlagTable(t, "vllm-serve-flags.tsv")
	sglang := loadFlagTable(t, "sglang-server-args.tsv")
	engines := Engines{Sim: []string{"npcorch", "sim-engine"}}
	checked := 0
	for where, m := range shippedModels(t) {
		switch m.Engine.Kind {
		case configs.EngineVLLM, configs.EngineSim:
		default:
			continue
		}
		for _, l := range launchVariants(m) {
			eng, err := engines.For(m.Engine.Kind)
			if err != nil {
				t.Fatal(err)
			}
			inv, err := eng.Invocation(l)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if err := checkServeArgv(vllm, inv.Argv, len(m.Engine.Sim)); err != nil {
				t.Errorf("%s: vllm serve would refuse %q: %v", where, inv.Argv, err)
			}
			// vLLM 0.10 and earlier refuse --limit-mm-per-prompt for a
			// model that is not multimodal (ModelConfig._init_multimodal_config).
			if m.TextOnly && slices.Contains(inv.Argv, "--limit-mm-per-prompt") {
				t.Errorf("%s: the text-only model gets --limit-mm-per-prompt, which vLLM refuses for a model that is not multimodal: %q", where, inv.Argv)
			}
			// The same model served by SGLang.
			ls := l
			ls.Model.Engine.Kind, ls.Model.Engine.Command, ls.Model.Engine.ExtraArgs = configs.EngineSGLang, nil, nil
			sinv, err := (SGLang{Binary: []string{"python", "-m", "sglang.launch_server"}}).Invocation(ls)
			if err != nil {
				t.Errorf("%s: SGLang: %v", where, err)
				continue
			}
			if err := checkFlags(sglang, sinv.Argv[3:]); err != nil {
				t.Errorf("%s: SGLang would refuse %q: %v", where, sinv.Argv, err)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d command lines checked; the shipped configs should give far more", checked)
	}
}

// checkServeArgv checks `BIN... serve MODEL FLAGS... [SIM FLAGS]`: exactly
// one positional after serve, then vLLM's flags (the last simFlags words
// are the simulated engine's own and are not vLLM's).
func checkServeArgv(table flagTable, argv []string, simFlags int) error {
	i := slices.Index(argv, "serve")
	if i < 0 {
		return fmt.Errorf("no serve subcommand")
	}
	rest := argv[i+1 : len(argv)-simFlags]
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return fmt.Errorf("no model tag after serve")
	}
	if len(rest) > 1 && !strings.HasPrefix(rest[1], "-") {
		return fmt.Errorf("unrecognized arguments: %s (vllm serve takes one positional, the model tag)", rest[1])
	}
	return checkFlags(table, rest[1:])
}

// TestConformanceCheckerRefusesWhatVLLMRefuses: the checker above is only
// worth what it refuses.
func TestConformanceCheckerRefusesWhatVLLMRefuses(t *testing.T) {
	table := loadFlagTable(t, "vllm-serve-flags.tsv")
	for argv, want := range map[string]string{
		"vllm serve serve org/m --port 1":                                            "unrecognized arguments: org/m",
		"vllm serve org/m --api-server 2":                                            "unrecognized arguments: --api-server",
		"vllm serve org/m --port x":                                                  "invalid int value",
		"vllm serve org/m --mm-encoder-tp-mode both":                                 "invalid choice",
		"vllm serve org/m --limit-mm-per-prompt {\"image\":{\"count\":2,\"max\":1}}": "unknown option",
		"vllm serve org/m --limit-mm-per-prompt image=2":                             "not a JSON object",
		"vllm serve org/m --mm-processor-kwargs {bad}":                               "invalid JSON",
		"vllm serve org/m --trust-remote-code=yes":                                   "ignored explicit argument",
		"vllm serve org/m --reasoning-parser qwen9":                                  "invalid choice",
		"vllm serve org/m --kv-cache-dtype fp8":                                      "choices were not read",
		"vllm serve org/m --served-model-name":                                       "expected at least one argument",
	} {
		err := checkServeArgv(table, strings.Fields(argv), 0)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", argv, err, want)
		}
	}
	ok := "vllm serve org/m --no-enable-prefix-caching --served-model-name a b --max-model-len 128k -tp 2 --limit-mm-per-prompt {\"image\":16,\"video\":0}"
	if err := checkServeArgv(table, strings.Fields(ok), 0); err != nil {
		t.Errorf("%s: %v", ok, err)
	}
}

// TestSimEngineAcceptsOnlyVLLMFlags: every vLLM-style flag the simulated
// engine accepts (its --help, less its own --sim-* flags) exists in vLLM,
// so that a command line the simulation accepts is not refused by vLLM
// for a flag name.
func TestSimEngineAcceptsOnlyVLLMFlags(t *testing.T) {
	table := loadFlagTable(t, "vllm-serve-flags.tsv")
	var out bytes.Buffer
	if err := simengine.Main(context.Background(), []string{"--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	flag := regexp.MustCompile(`^\s+(?:-\w, )?(--[a-z0-9-]+)`)
	n := 0
	for _, line := range strings.Split(out.String(), "\n") {
		m := flag.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[1], "--sim-") || m[1] == "--help" {
			continue
		}
		n++
		name := m[1]
		if _, ok := table[name]; !ok {
			if s, found := table["--"+strings.TrimPrefix(name, "--no-")]; !found || s.Kind != "bool" {
				t.Errorf("the simulated engine accepts %s, which vLLM 0.19's parser does not have", name)
			}
		}
	}
	if n < 20 {
		t.Fatalf("read only %d flags from the simulated engine's --help:\n%s", n, out.String())
	}
}

package configs

import (
	"slices"
	"strings"
)

// The parser names vLLM and SGLang register, as testdata/conformance/
// tool-parsers.tsv and the --reasoning-parser rows of vllm-serve-flags.tsv
// and sglang-server-args.tsv record them from the engines' source (file
// and commit in each table's header). launcher's conformance test holds
// these lists equal to the tables, so a registry entry naming a parser the
// engine does not register is refused at load, not by the engine after
// minutes of start-up (vLLM raises KeyError "invalid tool call parser"
// before loading weights; npcorch would then stop the model for good).
var (
	// VLLMToolCallParsers are vLLM's --tool-call-parser names
	// (vllm/tool_parsers/__init__.py, _TOOL_PARSERS_TO_REGISTER), every
	// name any copy read registers: the list moves between releases, so
	// a name accepted here may still be refused by an older engine (the
	// table says which copy has it, and the engine's refusal is a
	// permanent configuration failure).
	VLLMToolCallParsers = []string{
		"apertus", "cohere_command3", "cohere_command4", "deepseek_v3", "deepseek_v31", "deepseek_v32",
		"deepseek_v4", "ernie45", "functiongemma", "gemma4", "gigachat3", "glm45", "glm47", "granite",
		"granite-20b-fc", "granite4", "hermes", "hunyuan_a13b", "hy_v3", "internlm", "jamba", "kimi_k2",
		"lfm2", "llama3_json", "llama4_json", "llama4_pythonic", "longcat", "mimo", "minicpm5", "minimax",
		"minimax_m2", "minimax_m3", "mistral", "olmo3", "openai", "phi4_mini_json", "poolside_v1",
		"pythonic", "qwen3_coder", "qwen3_xml", "seed_oss", "step3", "step3p5", "xlam", "zaya_xml",
	}
	// SGLangToolCallParsers are SGLang's --tool-call-parser names
	// (python/sglang/srt/function_call/function_call_parser.py,
	// FunctionCallParser.ToolCallParserEnum), every name any copy read
	// registers.
	SGLangToolCallParsers = []string{
		"apertus2509", "cohere_command4", "deepseekv3", "deepseekv31", "deepseekv32", "deepseekv4",
		"dots", "gemma4", "gigachat3", "glm", "glm45", "glm47", "gpt-oss", "hermes", "hunyuan", "inkling",
		"interns1", "kimi_k2", "kimi_k3", "lfm2", "llama3", "mimo", "minicpm5", "minimax-m2", "minimax-m3",
		"mistral", "muse", "poolside_v1", "pythonic", "qwen", "qwen25", "qwen3_coder", "spark25", "step3",
		"step3p5", "trinity",
	}
	// VLLMReasoningParsers are vLLM's --reasoning-parser names
	// (vllm/reasoning/__init__.py).
	VLLMReasoningParsers = []string{
		"deepseek_r1", "deepseek_v3", "ernie45", "glm45", "granite", "hunyuan_a13b", "kimi_k2",
		"minimax_m2", "minimax_m2_append_think", "mistral", "olmo3", "openai_gptoss", "qwen3",
		"seed_oss", "step3",
	}
)

// BenchmarkCliniCARE marks a registry model of CliniCARE-Bench's roster
// (Model.Benchmark).
const BenchmarkCliniCARE = "clinicare"

// ToolCallParsers names a model's tool-call parser per engine, where
// vLLM's and SGLang's names differ (vLLM's deepseek_v32 is SGLang's
// deepseekv32). An empty name means the engine has none for the model:
// a campaign that needs tool calls cannot serve it there.
type ToolCallParsers struct {
	VLLM   string `yaml:"vllm,omitempty" json:"vllm,omitempty"`
	SGLang string `yaml:"sglang,omitempty" json:"sglang,omitempty"`
}

// validateParsers refuses a parser name the engine does not register,
// naming the valid ones.
func (e Engine) validateParsers(loc locator, path, model string) error {
	checks := []struct {
		field, name string
		valid       []string
		engine      string
	}{
		{".engine.tool_call_parser.vllm", e.ToolCallParser.VLLM, VLLMToolCallParsers, "vLLM's --tool-call-parser"},
		{".engine.tool_call_parser.sglang", e.ToolCallParser.SGLang, SGLangToolCallParsers, "SGLang's --tool-call-parser"},
		{".engine.reasoning_parser", e.ReasoningParser, VLLMReasoningParsers, "vLLM's --reasoning-parser (the registry keeps vLLM's name; SGLang's is derived)"},
	}
	for _, c := range checks {
		if c.name != "" && !slices.Contains(c.valid, c.name) {
			return loc.errorf(path+c.field, "model %q: %q is not a parser %s registers; valid: %s (testdata/conformance/ records them)",
				model, c.name, c.engine, strings.Join(c.valid, ", "))
		}
	}
	return nil
}

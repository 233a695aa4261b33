package configs

import (
	"strings"
	"testing"
)

// TestUnknownParserIsRefusedAtLoad: a parser name the engine does not
// register would make vLLM raise KeyError "invalid tool call parser" at
// every start; the registry refuses it at load instead, naming the file,
// the line, the model and the valid names.
func TestUnknownParserIsRefusedAtLoad(t *testing.T) {
	const head = "models:\n  - name: M\n    hf_id: o/m\n    attention_heads: 8\n    vocab_size: 1000\n    engine:\n      kind: vllm\n"
	cases := map[string][]string{
		// qwen25 is SGLang's name, not vLLM's: the classic mix-up.
		head + "      tool_call_parser: {vllm: qwen25}\n": {
			`reg.yaml: line 8: field models[0].engine.tool_call_parser.vllm: model "M": "qwen25" is not a parser vLLM's --tool-call-parser registers`,
			"hermes", "qwen3_coder", "glm47"},
		head + "      tool_call_parser: {vllm: glm47, sglang: glm_47}\n": {
			`line 8: field models[0].engine.tool_call_parser.sglang: model "M": "glm_47" is not a parser SGLang's --tool-call-parser registers`,
			"glm47", "minimax-m2"},
		head + "      reasoning_parser: deepseek-r1\n": {
			`line 8: field models[0].engine.reasoning_parser: model "M": "deepseek-r1" is not a parser vLLM's --reasoning-parser`,
			"deepseek_r1"},
	}
	for in, wants := range cases {
		_, err := ParseRegistry("reg.yaml", []byte(in))
		for _, want := range wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ParseRegistry(%q):\n got %v\nwant it to contain %q", in, err, want)
			}
		}
	}
	ok := head + "      reasoning_parser: deepseek_r1\n      tool_call_parser: {vllm: deepseek_v32, sglang: deepseekv32}\n"
	if _, err := ParseRegistry("reg.yaml", []byte(ok)); err != nil {
		t.Errorf("registered names refused: %v", err)
	}
}

package launcher

import (
	"slices"
	"strings"
)

// providerKeyEnv names the environment variables in which API providers'
// SDKs look for their keys. No engine npcorch launches needs them (vLLM
// reads its own VLLM_API_KEY, which npcorch sets, and HF_TOKEN, S3_* for
// weights), so they are kept from every launched engine: an engine runs
// third-party code, and its /proc/PID/environ outlives the key's use.
var providerKeyEnv = []string{
	"OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"MISTRAL_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY", "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY",
	"OPENROUTER_API_KEY", "XAI_API_KEY", "COHERE_API_KEY", "FIREWORKS_API_KEY", "MOONSHOT_API_KEY",
	"ZHIPUAI_API_KEY",
}

// EngineEnv is a launched engine's environment: npcorch's own (parent)
// without the variables named in drop or providerKeyEnv, then add
// (KEY=VALUE, the invocation's own variables), which wins over both: a
// model's engine.env may set a dropped name on purpose. Everything else
// passes, so PATH, HOME, CUDA_*, NCCL_*, HF_*, VLLM_*, LD_LIBRARY_PATH
// and proxies reach the engine as before: only named secrets are removed.
func EngineEnv(parent, drop, add []string) []string {
	env := make([]string, 0, len(parent)+len(add))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(drop, k) || slices.Contains(providerKeyEnv, k) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, add...)
}

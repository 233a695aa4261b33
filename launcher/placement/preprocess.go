package placement

import "github.com/npcorch/npcorch/configs"

// Image-preprocessing model constants; doc.go explains them.
const (
	// DefaultPreprocessImagesPerS is how many 512×1644 images one engine
	// API server process decodes, resizes and patchifies per second when
	// the registry sets no preprocess_images_per_s for the model.
	DefaultPreprocessImagesPerS = 20.0
	// DefaultMaxAPIServers caps the API server processes of one engine
	// (vLLM's --api-server-count) when Constraints sets no cap.
	DefaultMaxAPIServers = 4
)

// PreprocessRate returns the 512×1644 images per second one API server
// process of model m preprocesses: the registry's PreprocessImagesPerS, or
// DefaultPreprocessImagesPerS; 0 for a text-only model, which preprocesses
// none and so has no ceiling.
func PreprocessRate(m configs.Model) float64 {
	if m.TextOnly {
		return 0
	}
	if m.PreprocessImagesPerS > 0 {
		return m.PreprocessImagesPerS
	}
	return DefaultPreprocessImagesPerS
}

// ScalesAPIServers reports whether model m's engine can run more than one
// API server process: vLLM from 0.9.0 (--api-server-count), by the
// registry's engine.version (the reference release when unset), whether
// engine.command names an upstream vLLM in a virtual environment or a
// fork; and npcorch's simulated engine, which accepts the same flag.
// SGLang and wrappers keep one.
func ScalesAPIServers(m configs.Model) bool {
	switch m.Engine.Kind {
	case configs.EngineVLLM, "":
		return m.Engine.Supports(configs.VLLMAPIServerCount)
	case configs.EngineSim:
		return true
	}
	return false
}

// APIServers returns how many API server processes an engine of model m on
// tp GPUs of node n should run, at most limit (0 = DefaultMaxAPIServers).
// The engine gets the node's CPU cores in proportion to its GPUs, less one
// core per TP worker and one for the engine core; each API server then
// takes a core. It is 1 when the engine cannot scale its API servers, when
// the node's cores are unknown, when too few are left, and for a text-only
// model: more API servers are for image preprocessing, which it has none of.
func APIServers(m configs.Model, n Node, tp, limit int) int {
	if limit <= 0 {
		limit = DefaultMaxAPIServers
	}
	if m.TextOnly || !ScalesAPIServers(m) || n.CPUs <= 0 || len(n.GPUs) == 0 || tp < 1 {
		return 1
	}
	free := n.CPUs*tp/len(n.GPUs) - (tp + 1)
	return max(1, min(free, limit))
}

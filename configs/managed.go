package configs

import (
	"strconv"
	"strings"
)

// vllmManaged are the flags npcorch writes on every vLLM (and simulated
// engine) command line, each with the campaign field that sets it ("" when
// npcorch alone decides): launcher.vllmFlags. An engine's parser keeps the
// last of a repeated flag, so the same flag in engine.extra_args would
// silently override npcorch's — a port npcorch does not probe, a batch the
// pool does not know.
var vllmManaged = map[string]string{
	"--host": "", "--port": "", "--api-key": "",
	"--served-model-name":        "name",
	"--tensor-parallel-size":     "engine.tensor_parallel",
	"--gpu-memory-utilization":   "engine.gpu_memory_utilization",
	"--max-model-len":            "context_length",
	"--max-num-seqs":             "engine.max_num_seqs",
	"--limit-mm-per-prompt":      "tasks.*.max_images",
	"--allowed-local-media-path": "",
	"--generation-config":        "",
	"--api-server-count":         "",
	"--reasoning-parser":         "engine.reasoning_parser",
	"--mm-processor-kwargs":      "mm_processor_kwargs",
}

// sglangManaged are the flags npcorch writes on every SGLang command line
// (launcher.SGLang).
var sglangManaged = map[string]string{
	"--model-path": "hf_id", "--host": "", "--port": "", "--config": "", "--api-key": "",
	"--served-model-name":    "name",
	"--tp-size":              "engine.tensor_parallel",
	"--mem-fraction-static":  "engine.gpu_memory_utilization",
	"--max-running-requests": "engine.max_num_seqs",
	"--context-length":       "context_length",
	"--sampling-defaults":    "",
	"--reasoning-parser":     "engine.reasoning_parser",
}

// ManagedFlag reports whether npcorch writes flag (as --name or
// --name=value, underscores or dashes) on the command line of an engine of
// kind, and which campaign field sets it ("" when npcorch alone does).
func ManagedFlag(kind EngineKind, flag string) (field string, managed bool) {
	name := flagName(flag)
	switch kind {
	case EngineVLLM, EngineSim:
		field, managed = vllmManaged[name]
	case EngineSGLang:
		field, managed = sglangManaged[name]
	}
	return field, managed
}

// flagName is an argument's flag as the engines read it, --name with
// dashes for underscores and without =value; "" for an argument that is
// not a long flag.
func flagName(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	if !strings.HasPrefix(name, "--") {
		return ""
	}
	return "--" + strings.ReplaceAll(name[2:], "_", "-") // vLLM and SGLang read either
}

// contactFlags are the managed flags engine.sim may not set either: npcorch
// would not reach the simulated engine. The others it may, to simulate an
// engine that differs from what npcorch asked (a smaller image limit, say).
var contactFlags = map[string]bool{"--host": true, "--port": true, "--api-key": true, "--served-model-name": true}

// validateExtraArgs refuses a flag in engine.extra_args that npcorch
// writes itself (and, in engine.sim, one that npcorch needs to reach the
// engine): the engine would take the later one and npcorch would not know.
func (e Engine) validateExtraArgs(loc locator, path, model string) error {
	check := func(field string, args []string, only map[string]bool) error {
		for i, a := range args {
			set, managed := ManagedFlag(e.Kind, a)
			if !managed || (only != nil && !only[flagName(a)]) {
				continue
			}
			name, _, _ := strings.Cut(a, "=")
			how := "npcorch sets it itself"
			if set != "" {
				how = "set it with " + set + " instead"
			}
			return loc.errorf(path+"."+field+"["+strconv.Itoa(i)+"]",
				"model %q: %s is a flag npcorch writes on the engine's command line (the engine would keep the later one, unknown to npcorch); remove it: %s", model, name, how)
		}
		return nil
	}
	if err := check("engine.extra_args", e.ExtraArgs, nil); err != nil {
		return err
	}
	if e.Kind == EngineSim {
		return check("engine.sim", e.Sim, contactFlags)
	}
	return nil
}

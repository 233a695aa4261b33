package launcher

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// FailureKind names why an engine failed, so reports and the scheduler
// can tell a user what to change.
type FailureKind string

// Failure kinds. The first seven are read from the engine's log.
const (
	FailureArgs        FailureKind = "bad-engine-arguments"
	FailureParser      FailureKind = "unknown-parser"
	FailureOOM         FailureKind = "cuda-out-of-memory"
	FailureTPHeads     FailureKind = "tp-does-not-divide-heads"
	FailureUnsupported FailureKind = "unsupported-architecture"
	FailurePortInUse   FailureKind = "port-in-use"
	FailureNotFound    FailureKind = "binary-not-found"
	FailureExited      FailureKind = "exited"
	FailureNoProgress  FailureKind = "no-progress"
	FailureHardCap     FailureKind = "start-timeout"
	FailureForeign     FailureKind = "foreign-listener"
	FailureRejected    FailureKind = "rejected"
	FailureWarmUp      FailureKind = "warm-up-failed"
	FailureStalled     FailureKind = "stalled"
	FailureUnhealthy   FailureKind = "unhealthy"
	FailureConfig      FailureKind = "config"
	FailureStopped     FailureKind = "stopped"
)

// Permanent reports whether a failure of this kind is the model's own
// configuration, which no restart and no other GPU set can fix: the
// engine rejected its command line, its binary is missing, it does not
// support the model, or npcorch could not build the invocation.
func (k FailureKind) Permanent() bool {
	switch k {
	case FailureArgs, FailureParser, FailureNotFound, FailureUnsupported, FailureConfig:
		return true
	}
	return false
}

// portFault reports whether a failure of this kind is the port's: a
// foreign server shares it, or the engine could not bind it. Another port
// fixes it.
func (k FailureKind) portFault() bool { return k == FailureForeign || k == FailurePortInUse }

// IsPermanent reports whether err is an engine failure that no restart
// and no other GPU set can fix (see FailureKind.Permanent).
func IsPermanent(err error) bool {
	var e *EngineError
	return errors.As(err, &e) && e.Kind.Permanent()
}

// ErrPortInUse is wrapped by errors about a port another process holds.
var ErrPortInUse = errors.New("port in use")

// EngineError describes an engine that failed to start, crashed, stalled
// or could not be verified gone. Its message names the model, replica,
// what happened, what to do, and carries the log tail.
type EngineError struct {
	Model   string
	Replica int
	Kind    FailureKind
	// Detail is what was observed ("exit status 1", "no new log line
	// for 20m0s").
	Detail string
	// Hint is what the user can do; empty takes the kind's usual advice.
	Hint string
	// Log is the replica's log file; Tail its last error-looking lines.
	Log  string
	Tail []string
	Err  error
}

// Error implements error.
func (e *EngineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s replica %d: %s", e.Model, e.Replica, e.Kind)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Err != nil && !strings.Contains(e.Detail, e.Err.Error()) {
		b.WriteString(": " + e.Err.Error())
	}
	if hint := cmp.Or(e.Hint, hintFor(e.Kind)); hint != "" {
		b.WriteString("; " + hint)
	}
	if len(e.Tail) > 0 {
		b.WriteString("\n  last log lines")
		if e.Log != "" {
			b.WriteString(" of " + e.Log)
		}
		b.WriteString(":")
		for _, l := range e.Tail {
			b.WriteString("\n    " + l)
		}
	} else if e.Log != "" {
		b.WriteString(" (log: " + e.Log + ")")
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *EngineError) Unwrap() error { return e.Err }

type logPattern struct {
	kind FailureKind
	re   *regexp.Regexp
	hint string
}

// logPatterns are checked in order; the first that matches any tail line
// names the failure.
var logPatterns = []logPattern{
	// argparse's wording (vLLM and SGLang use it): "usage: ..." then
	// "PROG: error: MESSAGE", exit status 2.
	{FailureArgs, regexp.MustCompile(`: error: (unrecognized arguments: |argument \S+: |the following arguments are required: |ambiguous option: )`),
		"the engine rejected its command line: fix engine.extra_args (engine.sim for the simulated engine), engine.command or the other engine fields of this model (the engine's usage message is in its log); npcorch does not restart it or try other GPUs"},
	// vLLM checks the parser names after parsing, before loading weights
	// (vllm/entrypoints/openai/api_server.py validate_api_server_args:
	// KeyError "invalid tool call parser: NAME (chose from { ... })", the
	// same for "invalid reasoning parser"; cli_args.py
	// validate_parsed_serve_args: TypeError "--enable-auto-tool-choice
	// requires --tool-call-parser"). The traceback's last line names it.
	{FailureParser, regexp.MustCompile(`invalid (tool call|reasoning) parser: |--enable-auto-tool-choice requires --tool-call-parser`),
		"the engine does not register the model's tool-call or reasoning parser: set engine.tool_call_parser or engine.reasoning_parser to a name this engine build lists (the error names them; testdata/conformance/tool-parsers.tsv records vLLM's and SGLang's), or load a plugin with --tool-parser-plugin in engine.extra_args; npcorch does not restart it or try other GPUs"},
	{FailureOOM, regexp.MustCompile(`(?i)out of memory|OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|No available memory for the cache blocks|less than desired GPU memory utili[sz]ation|insufficient (GPU )?memory`),
		"lower engine.gpu_memory_utilization, context_length or max_num_seqs, give the model more GPUs (tensor_parallel), or free the GPUs (nvidia-smi shows who holds memory)"},
	{FailureTPHeads, regexp.MustCompile(`(?i)(is not|must be) divisible by|not divisible by|is not a multiple of`),
		"choose a tensor_parallel size that divides the model's attention heads, vision heads and vocabulary"},
	{FailureUnsupported, regexp.MustCompile(`(?i)architectures? .*(are|is) not supported|not supported for now|unrecognized configuration class|does not recognize this architecture|model type .* (is )?not (recognized|supported)|failed to be inspected`),
		"this engine build does not support the model: point engine.command at a build that does (e.g. the authors' vLLM fork) or serve it through a wrapper engine; npcorch does not restart it or try other GPUs"},
	{FailurePortInUse, regexp.MustCompile(`(?i)address already in use|errno 98`),
		"another process took the port; find it with `ss -ltnp` — npcorch allocates a fresh port on the next start"},
	{FailureNotFound, regexp.MustCompile(`(?i)executable file not found|no such file or directory|command not found`),
		"install the engine or set engine.command to its full path (e.g. a virtual environment's bin/vllm); npcorch does not restart it or try other GPUs"},
}

// Classify names a failure from an engine's log lines, with what to do
// about it; fallback is used when no pattern matches. Local replicas and
// Slurm jobs share it.
func Classify(lines []string, fallback FailureKind) (FailureKind, string) {
	for _, p := range logPatterns {
		for _, l := range lines {
			if p.re.MatchString(l) {
				return p.kind, p.hint
			}
		}
	}
	return fallback, hintFor(fallback)
}

// Evidence is the first of lines that names a failure of kind k (the
// argparse error, the CUDA OOM message), trimmed, or "" for kinds not
// read from logs.
func Evidence(lines []string, k FailureKind) string {
	for _, p := range logPatterns {
		if p.kind != k {
			continue
		}
		for _, l := range lines {
			if p.re.MatchString(l) {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

func hintFor(k FailureKind) string {
	for _, p := range logPatterns {
		if p.kind == k {
			return p.hint
		}
	}
	switch k {
	case FailureNoProgress:
		return "the engine printed no new log line (access-log and periodic stats lines do not count) and reached no new readiness stage for the whole no-progress window; the last readiness check above says what it answered; read its log, or raise launch.no_progress_timeout in the campaign file if loading is just slow"
	case FailureWarmUp:
		return "the engine is up but cannot answer a one-token chat; its answer is above and its log says why (a broken model, a bad chat template, a dead engine core)"
	case FailureHardCap:
		return "the engine kept working but never became ready within the hard cap; read its log, or raise launch.start_timeout in the campaign file for very large models"
	case FailureForeign:
		return "another server answers on this port; stop it (`ss -ltnp` names it) — npcorch will allocate another port"
	case FailureStalled:
		return "requests were running but no token was generated for the stall window; the engine was restarted"
	case FailureUnhealthy:
		return "the engine's /health stopped answering 200 while it was serving (vLLM does this when its engine core dies); the engine was restarted"
	case FailureExited:
		return "read the engine log for the cause"
	}
	return ""
}

package live

import "time"

// Format names the snapshot's JSON format, in /api/status and
// RUN/status.json.
const Format = "npcorch-status/1"

// RunState is where a run stands.
type RunState string

// Run states.
const (
	RunStarting    RunState = "starting"    // loading, planning, before the first engine
	RunRunning     RunState = "running"     // the campaign is running
	RunFinished    RunState = "finished"    // ended with every request answered
	RunIncomplete  RunState = "incomplete"  // ended with some requests not run (exit status 3)
	RunInterrupted RunState = "interrupted" // cut short by SIGINT or SIGTERM
	RunFailed      RunState = "failed"      // ended on an error
	// RunGone is what `npcorch status` says of a run whose status file
	// says running but whose process is gone: it crashed or was killed.
	RunGone RunState = "gone"
)

// ModelState is where a model stands.
type ModelState string

// Model states.
const (
	ModelWaiting  ModelState = "waiting"  // no engine started yet
	ModelStarting ModelState = "starting" // an engine is starting, none serves
	ModelServing  ModelState = "serving"  // at least one engine serves its requests
	ModelDone     ModelState = "done"     // its runner ended with every request answered
	ModelPartial  ModelState = "partial"  // its runner ended with requests not run
	ModelFailed   ModelState = "failed"   // abandoned: its engines could not serve it
	ModelStopped  ModelState = "stopped"  // the run ended before the model did
)

// Snapshot is a campaign's state at one instant: the JSON /api/status
// answers, each server-sent event carries and RUN/status.json holds. A
// published snapshot is never modified.
type Snapshot struct {
	Format   string   `json:"format"`
	Campaign string   `json:"campaign"`
	RunDir   string   `json:"run_dir"`
	State    RunState `json:"state"`
	// Error is why the run failed or was cut short.
	Error string `json:"error,omitempty"`
	// Host and PID are the npcorch process running the campaign.
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// ElapsedS is seconds since Started, at Updated.
	ElapsedS float64 `json:"elapsed_s"`
	// Totals add up every model.
	Totals Counts `json:"totals"`
	// ETA is the whole campaign's.
	ETA     ETA      `json:"eta"`
	Models  []Model  `json:"models"`
	Engines []Engine `json:"engines"`
	GPUs    GPUs     `json:"gpus"`
	// Timeline is the plan against what happened.
	Timeline Timeline `json:"timeline"`
	// Notes are things a user should know about the figures.
	Notes []string `json:"notes,omitempty"`
}

// Counts are requests — (item, repeat) pairs — and what became of them.
// Answered = Correct + Wrong + Invalid + Ungraded.
type Counts struct {
	// Requests is how many the campaign asks; Remaining those neither
	// answered nor given up on (not run).
	Requests  int `json:"requests"`
	Answered  int `json:"answered"`
	NotRun    int `json:"not_run"`
	Remaining int `json:"remaining"`
	// Correct and Wrong are answers graded against a gold label; Invalid
	// are answers the task's extractor could not read (scored wrong);
	// Ungraded are answers with nothing to grade them by (no gold label,
	// an excluded item, a task without a closed answer).
	Correct  int `json:"correct"`
	Wrong    int `json:"wrong"`
	Invalid  int `json:"invalid"`
	Ungraded int `json:"ungraded"`
	// Accuracy is Correct / (Correct + Wrong + Invalid), null before any
	// graded answer: a running figure per request, not the paper's metric
	// (`npcorch score` computes those).
	Accuracy *float64 `json:"accuracy"`
	// PromptTokens and CompletionTokens are as the engines reported them.
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Model is one model's state and progress.
type Model struct {
	Model string     `json:"model"`
	State ModelState `json:"state"`
	// External models are served by an endpoint npcorch did not start.
	External bool   `json:"external,omitempty"`
	Note     string `json:"note,omitempty"`
	Counts
	// TokensPerS is completion tokens per second and WorkPerS token
	// equivalents (prompt + 5 × completion) per second, over the last
	// minute of serving.
	TokensPerS float64 `json:"tokens_per_s"`
	WorkPerS   float64 `json:"work_per_s"`
	ETA        ETA     `json:"eta"`
	// PlannedStartS is, for a waiting model, when the plan made at the
	// start has its first engines asked to start, in seconds since the
	// start: what it waits for.
	PlannedStartS *float64 `json:"planned_start_s,omitempty"`
	Tasks         []Task   `json:"tasks"`
}

// Task is one task of one model.
type Task struct {
	Task  string `json:"task"`
	Title string `json:"title"`
	Level string `json:"level"`
	Counts
	// ThisRun are the requests this process journaled (a resumed run's
	// earlier answers are in Counts only): what /metrics counts.
	ThisRun Outcomes `json:"this_run"`
	// Duration and TTFT are the answered requests of this run: end-to-end
	// time and time to the first token, in seconds.
	Duration Histogram `json:"duration_s"`
	TTFT     Histogram `json:"ttft_s"`
}

// Outcomes count journaled requests by outcome, and their tokens.
type Outcomes struct {
	Correct          int   `json:"correct"`
	Wrong            int   `json:"wrong"`
	Invalid          int   `json:"invalid"`
	Ungraded         int   `json:"ungraded"`
	NotRun           int   `json:"not_run"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Histogram counts observations by upper bound, as Prometheus does:
// Counts[i] observations were at most Bounds[i] (cumulative); Count is
// all of them.
type Histogram struct {
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
}

// ETA is an estimate of the time left.
type ETA struct {
	// RemainingS is seconds left; null when nothing was measured to
	// estimate it from (Basis says why).
	RemainingS *float64   `json:"remaining_s"`
	At         *time.Time `json:"at,omitempty"`
	Basis      string     `json:"basis"`
}

// Engine is one engine replica.
type Engine struct {
	Model   string `json:"model"`
	Replica int    `json:"replica"`
	TP      int    `json:"tp,omitempty"`
	GPUs    []int  `json:"gpus"`
	// State is the launcher's last event: starting, start-up, ready,
	// crashed, restarting, failed, stopped.
	State    string    `json:"state"`
	Since    time.Time `json:"since"`
	Restarts int       `json:"restarts"`
	// LastCrash is when the engine last crashed or failed.
	LastCrash *time.Time `json:"last_crash,omitempty"`
	Endpoint  string     `json:"endpoint,omitempty"`
	// Error is the last failure; ErrorLines the engine log's last
	// error-looking lines with it; Log the log file.
	Error      string   `json:"error,omitempty"`
	ErrorLines []string `json:"error_lines,omitempty"`
	Log        string   `json:"log,omitempty"`
}

// GPUs are the node's GPUs as the campaign's sampler last read them.
type GPUs struct {
	// Sampled is false when the campaign does not sample GPUs; Note says
	// why (a fake node, Slurm).
	Sampled bool       `json:"sampled"`
	Note    string     `json:"note,omitempty"`
	Time    *time.Time `json:"time,omitempty"`
	Devices []GPU      `json:"devices"`
}

// GPU is one GPU's last sample.
type GPU struct {
	Index         int      `json:"index"`
	UUID          string   `json:"uuid,omitempty"`
	UtilPercent   *float64 `json:"util_pct"`
	MemUsedBytes  *uint64  `json:"mem_used_bytes"`
	MemTotalBytes *uint64  `json:"mem_total_bytes"`
	PowerWatts    *float64 `json:"power_w"`
}

// Timeline is the plan made at the start against what happened, in
// seconds since the run started.
type Timeline struct {
	// PlannedS is the plan's makespan; 0 without a plan.
	PlannedS float64 `json:"planned_s"`
	Bars     []Bar   `json:"bars"`
}

// Bar kinds.
const (
	BarPlanned   = "planned"   // the plan's wave: engines asked to start until stopped
	BarActual    = "actual"    // a replica: asked to start until stopped (Open while it lasts)
	BarProjected = "projected" // a serving model: now until its ETA
)

// Bar is one span of a model on some GPUs.
type Bar struct {
	Model   string  `json:"model"`
	Kind    string  `json:"kind"`
	Replica int     `json:"replica"`
	GPUs    []int   `json:"gpus,omitempty"`
	StartS  float64 `json:"start_s"`
	ReadyS  float64 `json:"ready_s,omitempty"`
	EndS    float64 `json:"end_s"`
	Open    bool    `json:"open,omitempty"`
}

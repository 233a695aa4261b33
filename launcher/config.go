package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// MemoryProbe reads a GPU's free memory; package gpu satisfies it over
// NVML. Teardown uses it to prove that an engine's memory came back.
type MemoryProbe interface {
	FreeBytes(uuid string) (uint64, error)
}

// Timing holds every delay of the lifecycle. Zero fields take the
// defaults of DefaultTiming; tests shrink them.
type Timing struct {
	// NoProgress fails a start when no log line and no readiness stage
	// arrived for this long; HardCap fails it regardless.
	NoProgress time.Duration
	HardCap    time.Duration
	// LoadingNote is how often a start that is not ready yet says what it
	// is waiting for (ReplicaLoading): a real engine loads for minutes.
	LoadingNote time.Duration
	// ProbeInterval is the readiness poll period (a new log line also
	// triggers a probe); ProbeTimeout bounds one probe request and
	// WarmUpTimeout the one-token warm-up chat.
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
	WarmUpTimeout time.Duration
	// WarmUpRetry spaces warm-up chats after an answer of 5xx or 429;
	// WarmUpFailures such answers in a row fail the start, with the
	// engine's answer in the error.
	WarmUpRetry    time.Duration
	WarmUpFailures int
	// Grace separates SIGTERM and SIGKILL to the process group;
	// WaitDelay bounds waiting for the output pipes after exit.
	Grace     time.Duration
	WaitDelay time.Duration
	// Verify bounds waiting for the group to be empty and for GPU memory
	// to come back; MemorySlack is how much less free memory than before
	// the start still counts as "back".
	Verify      time.Duration
	MemorySlack uint64
	// RestartBackoff doubles per attempt up to MaxBackoff; MaxRestarts
	// bounds attempts (negative: never restart); a replica ready for
	// StableAfter starts counting afresh.
	RestartBackoff time.Duration
	MaxBackoff     time.Duration
	MaxRestarts    int
	StableAfter    time.Duration
	// StallCheck is how often /metrics is read while ready; StallWindow
	// is how long requests may run without a new token before the engine
	// counts as hung. WithDefaults keeps StallCheck at most a quarter of
	// StallWindow (see stallCheckFor).
	StallCheck  time.Duration
	StallWindow time.Duration
}

// DefaultTiming is what a real GPU node needs.
var DefaultTiming = Timing{
	NoProgress:     20 * time.Minute,
	HardCap:        2 * time.Hour,
	LoadingNote:    30 * time.Second,
	ProbeInterval:  50 * time.Millisecond,
	ProbeTimeout:   5 * time.Second,
	WarmUpTimeout:  5 * time.Minute,
	WarmUpRetry:    time.Second,
	WarmUpFailures: 5,
	Grace:          20 * time.Second,
	WaitDelay:      5 * time.Second,
	Verify:         10 * time.Second,
	MemorySlack:    512 << 20,
	RestartBackoff: 10 * time.Second,
	MaxBackoff:     5 * time.Minute,
	MaxRestarts:    5,
	StableAfter:    10 * time.Minute,
	StallCheck:     30 * time.Second,
	StallWindow:    5 * time.Minute,
}

// WithDefaults fills every zero duration from DefaultTiming. MaxRestarts
// 0 takes the default and a negative one means never restart (0 after).
func (t Timing) WithDefaults() Timing {
	d := DefaultTiming
	orDefault(&t.NoProgress, d.NoProgress)
	orDefault(&t.HardCap, d.HardCap)
	orDefault(&t.LoadingNote, d.LoadingNote)
	orDefault(&t.ProbeInterval, d.ProbeInterval)
	orDefault(&t.ProbeTimeout, d.ProbeTimeout)
	orDefault(&t.WarmUpTimeout, d.WarmUpTimeout)
	orDefault(&t.WarmUpRetry, d.WarmUpRetry)
	orDefault(&t.Grace, d.Grace)
	orDefault(&t.WaitDelay, d.WaitDelay)
	orDefault(&t.Verify, d.Verify)
	orDefault(&t.RestartBackoff, d.RestartBackoff)
	orDefault(&t.MaxBackoff, d.MaxBackoff)
	orDefault(&t.StableAfter, d.StableAfter)
	orDefault(&t.StallCheck, d.StallCheck)
	orDefault(&t.StallWindow, d.StallWindow)
	t.StallCheck = stallCheckFor(t.StallCheck, t.StallWindow)
	if t.MemorySlack == 0 {
		t.MemorySlack = d.MemorySlack
	}
	if t.WarmUpFailures <= 0 {
		t.WarmUpFailures = d.WarmUpFailures
	}
	switch {
	case t.MaxRestarts == 0:
		t.MaxRestarts = d.MaxRestarts
	case t.MaxRestarts < 0:
		t.MaxRestarts = 0
	}
	return t
}

// stallCheckFor bounds the /metrics period by the stall window. The
// watchdog learns of the last token at the first reading after it, and
// sees the stall at the first reading a window after that one, so it
// restarts a hung engine between window and window + 2 × period after its
// last token. A period of a quarter window keeps that under 1.5 windows
// (a 10s window is checked every 2.5s), and no longer than check (30s by
// default) keeps long windows from reading /metrics more often than
// needed. The floor keeps the ticker's period positive.
func stallCheckFor(check, window time.Duration) time.Duration {
	return max(min(check, window/4), time.Millisecond)
}

// With lays a campaign file's launch settings over t: each field the file
// sets wins; the others keep t's value (and, if zero there, the default).
func (t Timing) With(l configs.LaunchSettings) Timing {
	set := func(v *time.Duration, from time.Duration) {
		if from > 0 {
			*v = from
		}
	}
	set(&t.NoProgress, l.NoProgressTimeout)
	set(&t.HardCap, l.StartTimeout)
	set(&t.WarmUpTimeout, l.WarmUpTimeout)
	set(&t.RestartBackoff, l.RestartBackoff)
	set(&t.MaxBackoff, l.MaxRestartBackoff)
	set(&t.StallWindow, l.StallWindow)
	set(&t.Grace, l.StopGrace)
	if l.WarmUpFailures > 0 {
		t.WarmUpFailures = l.WarmUpFailures
	}
	if l.MaxRestarts != nil {
		t.MaxRestarts = *l.MaxRestarts
		if t.MaxRestarts == 0 {
			t.MaxRestarts = -1 // Timing's "never"
		}
	}
	return t
}

// Backoff is the delay before restart attempt n (from 1): RestartBackoff
// doubled per attempt, at most MaxBackoff.
func (t Timing) Backoff(n int) time.Duration {
	d := t.RestartBackoff
	for i := 1; i < n && d < t.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, t.MaxBackoff)
}

// Config sets up a Supervisor. Only LogDir is required for launched
// engines; every other zero field takes a working default.
type Config struct {
	// Engines builds invocations; set Engines.Sim to run sim engines.
	Engines Engines
	// Shim is the command that runs ShimMain, e.g. [os.Executable(),
	// "serve", "engine-shim"]. Empty starts engines directly with
	// Pdeathsig, which does not reach their worker processes if npcorch
	// is SIGKILLed.
	Shim []string
	// LogDir receives one log file per replica.
	LogDir string
	// Host engines listen on; 127.0.0.1 when empty (--api-key protects
	// only /v1, so /health and /metrics stay local).
	Host string
	// Ports allocates engine ports; a fresh registry when nil.
	Ports *Ports
	// Scanner lists process-group members; /proc when nil.
	Scanner GroupScanner
	// Listeners proves that our child owns its port; /proc when nil.
	Listeners ListenerCheck
	// Memory verifies that GPU memory came back after a stop; skipped
	// when nil (no NVML).
	Memory MemoryProbe
	// Rand is the source of API keys; crypto/rand when nil.
	Rand io.Reader
	// Now stamps events; time.Now when nil.
	Now func() time.Time
	// HTTP probes engines; a client without proxies when nil.
	HTTP *http.Client
	// Timing holds the lifecycle's delays.
	Timing Timing
	// SecretEnv names environment variables that hold secrets no launched
	// engine may inherit: other endpoints' API keys (engine.api_key_env),
	// the live page's token. Well-known providers' key variables are
	// dropped as well (providerKeyEnv); the rest of npcorch's environment
	// passes to the engine.
	SecretEnv []string

	// onMove hears each replica state change (tests walk the lifecycle
	// with it); it runs on the replica's goroutine and must not block.
	onMove func(from, to State)
}

func (c Config) withDefaults() Config {
	if c.Ports == nil {
		c.Ports = &Ports{}
	}
	if c.Scanner == nil {
		c.Scanner = ProcScanner{}
	}
	if c.Listeners == nil {
		c.Listeners = ProcScanner{}
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HTTP == nil {
		c.HTTP = EngineClient()
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	c.Timing = c.Timing.WithDefaults()
	return c
}

// EngineClient is the HTTP client that probes and watches engines npcorch
// launched: it never goes through HTTP_PROXY (the engines are on this
// machine or the cluster's network) and keeps few idle connections.
func EngineClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}}
}

// NewAPIKey returns a random 128-bit key read from r, in hex, prefixed
// so that it is recognisable in a leak report.
func NewAPIKey(r io.Reader) (string, error) {
	b := make([]byte, 16)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("generate an API key: %w", err)
	}
	return "npc-" + hex.EncodeToString(b), nil
}

// orDefault sets a zero or negative duration to def.
func orDefault(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}

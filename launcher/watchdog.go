package launcher

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Watchdog judges a serving engine from outside, by its /health and
// /metrics: two /health answers in a row other than 200 (an engine whose
// core died but whose API server lives on), or requests running with no
// new token for the stall window, mean the engine is lost. Local replicas
// and engines in Slurm jobs share it. Read may run on any goroutine; Judge
// belongs to the one owner of the Watchdog.
type Watchdog struct {
	client    *http.Client
	probe     Probe
	timeout   time.Duration
	unhealthy int // consecutive /health answers other than 200
	stall     stallWatch
}

// Reading is one look at an engine: its /health status (0 when it could
// not be read or is not checked) and its load from /metrics.
type Reading struct {
	health int
	load   load
	err    error // reading /metrics
}

// NewWatchdog watches the engine behind p with t's stall window, reading
// through client (nil: a default client).
func NewWatchdog(client *http.Client, p Probe, t Timing) *Watchdog {
	t = t.WithDefaults()
	if client == nil {
		client = EngineClient()
	}
	return &Watchdog{client: client, probe: p, timeout: t.ProbeTimeout, stall: stallWatch{window: t.StallWindow}}
}

// Enabled reports whether there is anything to watch: an engine without
// a metrics endpoint is watched only through its process or job.
func (w *Watchdog) Enabled() bool { return w.probe.MetricsURL != "" }

// Read takes one reading of /health and /metrics.
func (w *Watchdog) Read(ctx context.Context) Reading {
	var rd Reading
	if w.probe.HealthURL != "" {
		if code, _, err := httpDo(ctx, w.client, http.MethodGet, w.probe.HealthURL, "", nil, w.timeout); err == nil {
			rd.health = code
		}
	}
	rd.load, rd.err = scrapeLoad(ctx, w.client, w.probe.MetricsURL, w.timeout)
	return rd
}

// Judge records a reading taken at now and says why the engine is lost,
// or returns "" while it is fine. A reading that failed outright counts
// for nothing: a dead engine shows up as an exit, a slow one next time.
func (w *Watchdog) Judge(rd Reading, now time.Time) (FailureKind, string) {
	switch {
	case rd.health == http.StatusOK:
		w.unhealthy = 0
	case rd.health != 0:
		if w.unhealthy++; w.unhealthy >= 2 {
			w.unhealthy = 0
			return FailureUnhealthy, fmt.Sprintf("/health answered %d twice in a row", rd.health)
		}
	}
	if rd.err != nil {
		return "", ""
	}
	if quiet, stalled := w.stall.observe(rd.load, now); stalled {
		return FailureStalled, fmt.Sprintf("%g requests running and no new token for %v (stall window %v)",
			rd.load.running, roundQuiet(quiet), w.stall.window)
	}
	return "", ""
}

// roundQuiet rounds a measured time without tokens for the message: to
// the second from a second on, to the millisecond below.
func roundQuiet(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

package launcher

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The lifecycle benchmarks run the simulated engine as real processes and
// report medians over 20 engines (one benchmark op = 20 engines):
//
//	go test ./launcher -run '^$' -bench Lifecycle -benchtime 1x

const benchRuns = 20

func reportDurations(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(ds[len(ds)/2]), name+"-median-ms")
	b.ReportMetric(ms(ds[len(ds)*9/10]), name+"-p90-ms")
	b.ReportMetric(ms(ds[len(ds)-1]), name+"-max-ms")
}

// firstAccept dials port every millisecond from start and returns when a
// connection is first accepted: the moment the engine listens, which the
// simulated engine does only once it is ready.
func firstAccept(port int, deadline time.Time) time.Time {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond)
		if err == nil {
			t := time.Now()
			c.Close()
			return t
		}
		time.Sleep(time.Millisecond)
	}
	return time.Time{}
}

// BenchmarkLifecycleReady measures engine ready (port accepts) → npcorch
// marks the replica ready (EventReady). Goal: median ≤ 300 ms.
func BenchmarkLifecycleReady(b *testing.B) {
	for b.Loop() {
		var lat []time.Duration
		for i := range benchRuns {
			cfg := testConfig(b)
			cfg.Timing.ProbeInterval = DefaultTiming.ProbeInterval // as in production
			sup := NewSupervisor(cfg)
			sub := sup.Subscribe()
			r, _ := sup.Add(ReplicaSpec{Model: simModel("bench", "--sim-load-time", "300ms", "--sim-workers", "0"), Replica: i})
			go r.Start(context.Background())
			var listened time.Time
			for ev := range sub.C {
				if ev.Kind == ReplicaStarting {
					listened = firstAccept(ev.Endpoint.Port, time.Now().Add(10*time.Second))
				}
				if ev.Kind == ReplicaReady {
					lat = append(lat, ev.Time.Sub(listened))
					break
				}
				if ev.Kind == ReplicaFailed {
					b.Fatal(ev)
				}
			}
			sub.Close()
			if err := sup.StopAll(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		reportDurations(b, "ready", lat)
	}
}

// BenchmarkLifecycleCrash measures the engine dying (SIGKILL through
// POST /sim/fault crash) → EventCrashed. Goal: ≤ 1 s.
func BenchmarkLifecycleCrash(b *testing.B) {
	for b.Loop() {
		cfg := testConfig(b)
		cfg.Timing.RestartBackoff, cfg.Timing.MaxBackoff, cfg.Timing.MaxRestarts = time.Millisecond, time.Millisecond, benchRuns+1
		sup := NewSupervisor(cfg)
		sub := sup.Subscribe()
		ep, err := sup.Start(context.Background(), ReplicaSpec{Model: simModel("bench", "--sim-workers", "1")})
		if err != nil {
			b.Fatal(err)
		}
		cur := ep[0]
		var lat []time.Duration
		for range benchRuns {
			t0 := time.Now()
			fault(&testing.T{}, cur, "crash")
			for ev := range sub.C {
				if ev.Kind == ReplicaCrashed {
					lat = append(lat, ev.Time.Sub(t0))
				}
				if ev.Kind == ReplicaReady {
					cur = ev.Endpoint
					break
				}
				if ev.Kind == ReplicaFailed {
					b.Fatal(ev)
				}
			}
		}
		sub.Close()
		if err := sup.StopAll(context.Background()); err != nil {
			b.Fatal(err)
		}
		reportDurations(b, "crash-seen", lat)
	}
}

// BenchmarkLifecycleStop measures Stop with verification (group empty) for
// engines whose workers honour SIGTERM and for workers that ignore it and
// outlive the engine (the full grace period, then SIGKILL). Goal: ≤ grace
// + 1 s; the grace here is 1 s.
func BenchmarkLifecycleStop(b *testing.B) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"polite", []string{"--sim-workers", "2"}},
		{"stubborn", []string{"--sim-workers", "2", "--sim-worker-ignore-sigterm", "--sim-orphan-workers"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				var lat []time.Duration
				for i := range benchRuns {
					cfg := testConfig(b)
					cfg.Timing.Grace = time.Second
					sup := NewSupervisor(cfg)
					eps, err := sup.Start(context.Background(), ReplicaSpec{Model: simModel("bench", tc.flags...), Replica: i})
					if err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					if err := sup.StopAll(context.Background()); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					if pids, _ := (ProcScanner{}).Members(eps[0].PGID); len(pids) > 0 {
						b.Fatalf("group %d left %v", eps[0].PGID, pids)
					}
				}
				reportDurations(b, "stop-verified", lat)
			}
		})
	}
}

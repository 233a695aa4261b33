package launcher

import (
	"context"
	"testing"
	"time"
)

// TestLifecycleIsOneTable checks the table's shape: every state but
// Stopped can be stopped, every state is reached from New, and nothing
// leaves Stopped.
func TestLifecycleIsOneTable(t *testing.T) {
	states := []State{StateNew, StateStarting, StateReady, StateRestarting, StateStopping, StateStopped, StateFailed}
	reach := map[State]bool{StateNew: true}
	for changed := true; changed; {
		changed = false
		for _, tr := range lifecycle {
			if reach[tr.from] && !reach[tr.to] {
				reach[tr.to], changed = true, true
			}
		}
	}
	for _, s := range states {
		if !reach[s] {
			t.Errorf("state %s cannot be reached from new", s)
		}
		switch {
		case s == StateStopped:
			for _, tr := range lifecycle {
				if tr.from == StateStopped {
					t.Errorf("the table leaves stopped: → %s (%s)", tr.to, tr.cause)
				}
			}
		case s != StateStopping && !canMove(s, StateStopping):
			t.Errorf("a replica %s cannot be stopped", s)
		}
	}
	for _, tr := range lifecycle {
		if tr.cause == "" {
			t.Errorf("%s → %s says not what makes it", tr.from, tr.to)
		}
	}
}

// TestLifecycleWalk drives real replicas (the simulated engine) along
// every row of the lifecycle table: each scenario records the state
// changes its replica makes, every change made must be a row (testConfig
// checks), and every row must be made by some scenario.
func TestLifecycleWalk(t *testing.T) {
	all := &moveLog{}
	config := func(t *testing.T) Config {
		cfg := testConfig(t)
		own := cfg.onMove
		cfg.onMove = func(from, to State) { own(from, to); all.add(from, to) }
		return cfg
	}
	scenarios := []struct {
		name string
		run  func(t *testing.T, cfg Config)
	}{
		{"crash, restart, stop", func(t *testing.T, cfg Config) {
			sup := NewSupervisor(cfg)
			sub := sup.Subscribe()
			defer sub.Close()
			ep, err := startOne(t, sup, ReplicaSpec{Model: simModel("walk-crash")})
			if err != nil {
				t.Fatal(err)
			}
			fault(t, ep, "crash")
			nextEvent(t, sub, ReplicaRestarting)
			nextEvent(t, sub, ReplicaReady)
			stopAll(t, sup)
		}},
		{"stop before any start", func(t *testing.T, cfg Config) {
			rep, err := NewSupervisor(cfg).Add(ReplicaSpec{Model: simModel("walk-never")})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"bad arguments, then stop", func(t *testing.T, cfg Config) {
			sup := NewSupervisor(cfg)
			if _, err := startOne(t, sup, ReplicaSpec{Model: simModel("walk-args", "--bogus-flag", "1")}); err == nil {
				t.Fatal("an engine with a bad argument started")
			}
			stopAll(t, sup)
		}},
		{"stop during the start", func(t *testing.T, cfg Config) {
			sup := NewSupervisor(cfg)
			sub := sup.Subscribe()
			defer sub.Close()
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() {
				_, err := sup.Start(ctx, ReplicaSpec{Model: simModel("walk-cancel", "--sim-fault", "never-ready", "--sim-workers", "1")})
				res <- err
			}()
			nextEvent(t, sub, ReplicaStarting)
			cancel()
			<-res
			stopAll(t, sup)
		}},
		{"crash without restarts", func(t *testing.T, cfg Config) {
			cfg.Timing.MaxRestarts = -1
			sup := NewSupervisor(cfg)
			sub := sup.Subscribe()
			defer sub.Close()
			ep, err := startOne(t, sup, ReplicaSpec{Model: simModel("walk-once")})
			if err != nil {
				t.Fatal(err)
			}
			fault(t, ep, "crash")
			nextEvent(t, sub, ReplicaFailed)
			stopAll(t, sup)
		}},
		{"stop during the backoff", func(t *testing.T, cfg Config) {
			cfg.Timing.RestartBackoff, cfg.Timing.MaxBackoff = time.Hour, time.Hour
			sup := NewSupervisor(cfg)
			sub := sup.Subscribe()
			defer sub.Close()
			ep, err := startOne(t, sup, ReplicaSpec{Model: simModel("walk-backoff")})
			if err != nil {
				t.Fatal(err)
			}
			fault(t, ep, "crash")
			nextEvent(t, sub, ReplicaRestarting)
			stopAll(t, sup)
		}},
		{"a foreign server on the port", func(t *testing.T, cfg Config) {
			cfg.Listeners = &foreignOn{taken: 1}
			sup := NewSupervisor(cfg)
			if _, err := startOne(t, sup, ReplicaSpec{Model: simModel("walk-moved")}); err != nil {
				t.Fatal(err)
			}
			stopAll(t, sup)
		}},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, config(t)) })
	}
	taken := all.taken()
	for _, row := range lifecycle {
		found := false
		for _, m := range taken {
			found = found || m.from == row.from && m.to == row.to
		}
		if !found {
			t.Errorf("no scenario took %s → %s (%s)", row.from, row.to, row.cause)
		}
	}
}

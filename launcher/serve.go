package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// ServeSpecs builds the replicas `npcorch serve` starts for one model: one
// per GPU set, or, with no GPU sets (sim and external engines),
// engine.replicas replicas (at least one) without GPUs.
func ServeSpecs(m configs.Model, gpuSets [][]string, mediaRoot string) []ReplicaSpec {
	var specs []ReplicaSpec
	if len(gpuSets) == 0 {
		for i := range max(1, m.Engine.Replicas) {
			specs = append(specs, ReplicaSpec{Model: m, Replica: i, MediaRoot: mediaRoot})
		}
		return specs
	}
	for i, set := range gpuSets {
		specs = append(specs, ReplicaSpec{Model: m, Replica: i, GPUs: set, MediaRoot: mediaRoot})
	}
	return specs
}

// ServedEndpoint is one line of the endpoints file Serve writes.
type ServedEndpoint struct {
	Model      string   `json:"model"`
	Replica    int      `json:"replica"`
	BaseURL    string   `json:"base_url"`
	APIKey     string   `json:"api_key,omitempty"`
	MaxNumSeqs int      `json:"max_num_seqs"`
	GPUs       []string `json:"gpus,omitempty"`
}

// Serve starts specs, prints their endpoints to out (API keys go only to
// endpointsFile, mode 0600, when it is set), reports lifecycle events as
// they happen, and when ctx ends (SIGINT/SIGTERM) stops every engine,
// verified, before returning. A start failure stops the replicas that did
// start and returns the failure.
func Serve(ctx context.Context, sup *Supervisor, specs []ReplicaSpec, out io.Writer, endpointsFile string) error {
	w := &lockedWriter{w: out}
	sub := sup.Subscribe()
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for ev := range sub.C {
			w.printf("%s\n", ev)
		}
	}()
	defer func() {
		sub.Close()
		<-printed
	}()

	eps, startErr := sup.Start(ctx, specs...)
	if startErr == nil && ctx.Err() == nil {
		if err := writeEndpoints(endpointsFile, eps); err != nil {
			startErr = err
		}
	}
	if startErr == nil && ctx.Err() == nil {
		w.printf("\n%d replica(s) ready:\n", len(eps))
		for _, ep := range eps {
			w.printf("  %s/r%d  %s  max_num_seqs=%d  gpus=%s\n", ep.Model, ep.Replica, ep.BaseURL, ep.MaxNumSeqs, ep.gpuNames())
		}
		if endpointsFile != "" {
			w.printf("API keys: %s (mode 0600)\n", endpointsFile)
		}
		w.printf("Serving; press Ctrl-C to stop every engine.\n")
		<-ctx.Done()
		w.printf("stopping %d replica(s)...\n", len(sup.Replicas("")))
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), stopAllBound(sup.Timing()))
	defer cancel()
	stopErr := sup.StopAll(stopCtx)
	if stopErr == nil {
		w.printf("all engines stopped; no process of theirs remains\n")
	}
	if startErr != nil {
		if stopErr != nil {
			return fmt.Errorf("%w\nwhile stopping: %v", startErr, stopErr)
		}
		return startErr
	}
	return stopErr
}

// stopAllBound is how long a verified stop of every replica may take.
func stopAllBound(t Timing) time.Duration {
	return t.Grace + t.WaitDelay + 2*t.Verify + t.ProbeTimeout
}

func writeEndpoints(path string, eps []Endpoint) error {
	if path == "" {
		return nil
	}
	list := make([]ServedEndpoint, len(eps))
	for i, ep := range eps {
		list[i] = ServedEndpoint{Model: ep.Model, Replica: ep.Replica, BaseURL: ep.BaseURL, APIKey: ep.APIKey, MaxNumSeqs: ep.MaxNumSeqs, GPUs: ep.GPUs}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("encode endpoints: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write endpoints file: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write endpoints file: %w", err)
	}
	return nil
}

// lockedWriter serialises the event printer and the endpoint listing.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func TestServeSpecs(t *testing.T) {
	m := simModel("m")
	m.Engine.Replicas = 2
	if got := ServeSpecs(m, nil, "/prep"); len(got) != 2 || got[1].Replica != 1 || got[1].MediaRoot != "/prep" || got[1].GPUs != nil {
		t.Errorf("no GPU sets: %+v", got)
	}
	got := ServeSpecs(configs.Model{Name: "v"}, [][]string{{"GPU-a", "GPU-b"}, {"GPU-c", "GPU-d"}}, "")
	if len(got) != 2 || got[1].GPUs[1] != "GPU-d" || got[1].Replica != 1 {
		t.Errorf("GPU sets: %+v", got)
	}
}

func TestServePrintsEndpointsAndStopsOnCancel(t *testing.T) {
	cfg := testConfig(t)
	sup := NewSupervisor(cfg)
	sub := sup.Subscribe()
	defer sub.Close()
	m := simModel("served")
	m.Engine.Replicas = 2
	ctx, cancel := context.WithCancel(context.Background())
	out := &signalWriter{serving: make(chan struct{})}
	file := filepath.Join(t.TempDir(), "endpoints.json")
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, sup, ServeSpecs(m, nil, ""), out, file) }()
	var pgids []int
	for len(pgids) < 2 {
		if ev := nextEvent(t, sub, ReplicaReady); ev.Kind == ReplicaReady {
			pgids = append(pgids, ev.Endpoint.PGID)
		}
	}
	<-out.serving
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, pg := range pgids {
		assertGroupEmpty(t, pg)
	}
	var eps []ServedEndpoint
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &eps) != nil || len(eps) != 2 || eps[0].APIKey == "" {
		t.Fatalf("endpoints file %s: %v\n%s", file, err, b)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("endpoints file mode %v", st.Mode().Perm())
	}
	text := out.String()
	// Simulated engines hold no GPU: said, not left blank ("gpus=").
	for _, want := range []string{"2 replica(s) ready", eps[0].BaseURL + "  max_num_seqs=", "gpus=none\n", eps[1].BaseURL, "all engines stopped"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, eps[0].APIKey) {
		t.Errorf("output shows an API key:\n%s", text)
	}
}

// signalWriter closes serving when Serve says it is serving.
type signalWriter struct {
	bytes.Buffer
	serving chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("Serving;")) {
		defer close(w.serving)
	}
	return w.Buffer.Write(p)
}

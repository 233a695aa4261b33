package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/live"
)

// TestRealPrometheusScrapesTheMetrics: a real Prometheus server (the
// Debian package .ci/run installs), configured by the scrape file npcorch
// ships (configs/grafana/prometheus.yml: the token read from a file),
// scrapes the live page's /metrics, keeps the target up with no scrape
// error, answers a query with the count the journal gives, and evaluates
// every query of the shipped Grafana dashboard without an error. The
// parser tests read the text with Prometheus's own library; this is the
// server a user points at npcorch.
func TestRealPrometheusScrapesTheMetrics(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (.ci/run installs it)")
	}
	const token = "prometheus-test-token-0123456789"
	h, _, target := serve(t, "0", token)
	h.Post(begin())
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 1000, 100, time.Second, 100*time.Millisecond)})
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "wrong", 1000, 100, time.Second, 100*time.Millisecond)})
	await(t, h, "two answers", func(s *live.Snapshot) bool { return s.Totals.Answered == 2 })

	prom := startPrometheus(t, bin, shippedScrapeConfig(t, strings.TrimPrefix(target, "http://"), token))
	want := map[string]string{
		`up{job="npcorch"}`: "1",
		`npcorch_requests_total{model="` + modelA + `",task="pathology",outcome="correct"}`: "1",
		`npcorch_requests_total{model="` + modelA + `",task="pathology",outcome="wrong"}`:   "1",
	}
	deadline := time.Now().Add(30 * time.Second)
	for q, v := range want {
		for {
			r := promQuery(prom, q)
			if r.err == nil && len(r.values) == 1 && r.values[0] == v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus at %s did not answer %s = %s within 30 s (last %+v); targets: %s", prom, q, v, r, targets(prom))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if s := targets(prom); !strings.Contains(s, `"lastError":""`) {
		t.Errorf("the scrape reported an error: %s", s)
	}
	vars := strings.NewReplacer("$campaign", "test", "$host", ".*")
	for _, q := range queries(t) {
		if strings.HasPrefix(q, "label_values(") {
			continue // Grafana's, not PromQL
		}
		if r := promQuery(prom, vars.Replace(q)); r.err != nil {
			t.Errorf("Prometheus refused the dashboard's query %s: %v", q, r.err)
		}
	}
}

// shippedScrapeConfig is configs/grafana/prometheus.yml aimed at target,
// its token file holding token, scraping every second.
func shippedScrapeConfig(t *testing.T, target, token string) string {
	t.Helper()
	data, err := os.ReadFile(scrapeFile)
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "npcorch-live.token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := string(data)
	for old, repl := range map[string]string{`["gpu-node-1:9410"]`: fmt.Sprintf("[%q]", target),
		"/etc/prometheus/npcorch-live.token": tokenFile, "scrape_interval: 15s": "scrape_interval: 1s", "scrape_timeout: 10s": "scrape_timeout: 1s"} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("%s no longer holds %s; update this test", scrapeFile, old)
		}
		cfg = strings.ReplaceAll(cfg, old, repl)
	}
	return cfg
}

// promResult is an instant query's answer: its sample values, or the
// error Prometheus (or the request) gave.
type promResult struct {
	values []string
	err    error
}

func promQuery(prom, q string) promResult {
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return promResult{err: err}
	}
	defer resp.Body.Close()
	var out struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return promResult{err: err}
	}
	if out.Status != "success" {
		return promResult{err: fmt.Errorf("%s: %s", out.Status, out.Error)}
	}
	var r promResult
	for _, x := range out.Data.Result {
		v, _ := x.Value[1].(string)
		r.values = append(r.values, v)
	}
	return r
}

// startPrometheus runs a Prometheus server with the configuration conf
// and returns its address once it is ready (at most 30 s). A port taken
// between choosing it and Prometheus binding it is chosen again.
func startPrometheus(t *testing.T, bin, conf string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		base := "http://" + freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, fmt.Sprint("data", attempt)),
			"--web.listen-address="+strings.TrimPrefix(base, "http://"), "--log.level=warn")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var log bytes.Buffer // read only once the process is gone
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("start prometheus: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { cancel(); <-exited })
		switch awaitReady(base, exited, 30*time.Second) {
		case nil:
			return base
		case errExited:
			if attempt < 3 && strings.Contains(log.String(), "address already in use") {
				continue
			}
			t.Fatalf("prometheus exited before it was ready:\n%s", log.String())
		default:
			cancel()
			<-exited
			t.Fatalf("prometheus not ready at %s within 30 s:\n%s", base, log.String())
		}
	}
}

var errExited = errors.New("exited")

// awaitReady polls base's /-/ready until it answers 200 (nil), the process
// exits (errExited) or limit passes.
func awaitReady(base string, exited <-chan struct{}, limit time.Duration) error {
	deadline := time.After(limit)
	for {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errExited
		case <-deadline:
			return context.DeadlineExceeded
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePort is a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// targets is Prometheus's view of its scrape targets, for messages.
func targets(prom string) string {
	resp, err := http.Get(prom + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	return string(b)
}

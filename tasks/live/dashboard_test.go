package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/live"
)

const (
	dashboardFile = "../../configs/grafana/npcorch-campaign.json"
	scrapeFile    = "../../configs/grafana/prometheus.yml"
)

// queries are every PromQL expression of the dashboard: its panels'
// targets and its variables' queries.
func queries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			ID      int
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Type  string
				Query json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d twice", dashboardFile, p.ID)
		}
		ids[p.ID] = true
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		var q struct{ Query string }
		if v.Type == "query" && json.Unmarshal(v.Query, &q) == nil {
			out = append(out, q.Query)
		}
	}
	return out
}

// fullScrape is /metrics of a server with every kind of series: a
// campaign with answers, an engine, and a fake GPU node's DCGM metrics.
func fullScrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := nvml.NewFake("h200-1")
	if errors.Is(err, gpu.ErrNVMLNotCompiled) {
		t.Skip("fake GPU nodes need cgo")
	}
	if err != nil {
		t.Fatal(err)
	}
	f.SetProcesses(0, nvml.FakeProcess{PID: 4242, MemoryBytes: 20 << 30, Model: modelA, Replica: "0"})
	src := f.Source()
	defer src.Close()
	c, err := gpu.NewCollector(context.Background(), src, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	h, clk, url := serveWithGPUs(t, c)
	h.Post(begin())
	h.Post(live.Assigned{Model: modelA, TP: 1, GPUs: []int{0}, At: t0})
	h.Post(live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: t0, Kind: launcher.ReplicaReady, Model: modelA}})
	clk.Set(5 * time.Second)
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 100, 10, time.Second, 100*time.Millisecond)})
	await(t, h, "an answer", func(s *live.Snapshot) bool { return s.Totals.Answered == 1 && s.ETA.RemainingS != nil })
	// SM activity is measured between two reads (GPM): Prometheus
	// scrapes again and again, so does the test.
	scrape(t, url)
	fams, _ := scrape(t, url)
	return fams
}

// TestDashboardQueriesOnlyMetricsThatExist reads the Grafana dashboard's
// queries and checks every metric and every label they name against a
// real scrape.
func TestDashboardQueriesOnlyMetricsThatExist(t *testing.T) {
	fams := fullScrape(t)
	labels := map[string]map[string]bool{}
	for name, f := range fams {
		labels[name] = map[string]bool{"le": f.GetType() == dto.MetricType_HISTOGRAM}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				labels[name][l.GetName()] = true
			}
		}
	}
	metricRe := regexp.MustCompile(`\b(npcorch_[a-z_]+|DCGM_FI_[A-Z_]+)\b`)
	selectorRe := regexp.MustCompile(`\b(npcorch_[a-z_]+|DCGM_FI_[A-Z_]+)\{([^}]*)\}`)
	byRe := regexp.MustCompile(`by \(([^)]*)\)\s*\(([^()]*(?:\([^()]*\))?[^()]*)\)`)
	matcherRe := regexp.MustCompile(`([A-Za-z_]+)\s*(?:=~|!=|!~|=)`)
	family := func(name string) string {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && fams[base] != nil && fams[base].GetType() == dto.MetricType_HISTOGRAM {
				return base
			}
		}
		return name
	}
	used := map[string]bool{}
	for _, q := range queries(t) {
		for _, m := range metricRe.FindAllString(q, -1) {
			name := family(m)
			used[name] = true
			if fams[name] == nil {
				t.Errorf("the dashboard queries %s, which /metrics does not export: %s", m, q)
			}
		}
		for _, s := range selectorRe.FindAllStringSubmatch(q, -1) {
			name := family(s[1])
			for _, l := range matcherRe.FindAllStringSubmatch(s[2], -1) {
				if fams[name] != nil && !labels[name][l[1]] {
					t.Errorf("the dashboard selects %s by label %s, which it lacks: %s", s[1], l[1], q)
				}
			}
		}
		for _, b := range byRe.FindAllStringSubmatch(q, -1) {
			for _, m := range metricRe.FindAllString(b[2], -1) {
				name := family(m)
				for _, l := range strings.Split(b[1], ",") {
					if l = strings.TrimSpace(l); fams[name] != nil && !labels[name][l] {
						t.Errorf("the dashboard groups %s by %s, a label it lacks: %s", m, l, q)
					}
				}
			}
		}
	}
	// The panels the issue asks for.
	for _, want := range []string{"npcorch_requests_remaining", "npcorch_completion_tokens_total", "npcorch_request_duration_seconds",
		"npcorch_time_to_first_token_seconds", "npcorch_engine_restarts_total", "npcorch_requests_total", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"} {
		if !used[want] {
			t.Errorf("the dashboard has no panel over %s", want)
		}
	}
}

func TestScrapeConfigReadsTheTokenFromAFile(t *testing.T) {
	data, err := os.ReadFile(scrapeFile)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			Authorization struct {
				Type            string
				Credentials     string
				CredentialsFile string `yaml:"credentials_file"`
			}
			StaticConfigs []struct{ Targets []string } `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", scrapeFile, err)
	}
	if len(c.ScrapeConfigs) != 1 {
		t.Fatalf("%s: %d scrape configs", scrapeFile, len(c.ScrapeConfigs))
	}
	sc := c.ScrapeConfigs[0]
	if sc.Authorization.Type != "Bearer" || sc.Authorization.CredentialsFile == "" || sc.Authorization.Credentials != "" {
		t.Errorf("%s: authorization %+v; want a Bearer token from a file", scrapeFile, sc.Authorization)
	}
	if len(sc.StaticConfigs) != 1 || !strings.HasSuffix(sc.StaticConfigs[0].Targets[0], ":"+live.DefaultPort) {
		t.Errorf("%s: targets %+v; want the default port %s", scrapeFile, sc.StaticConfigs, live.DefaultPort)
	}
}

// serveWithGPUs serves a fresh hub on loopback with c's GPU metrics.
func serveWithGPUs(t *testing.T, c *gpu.Collector) (*live.Hub, *clock, string) {
	t.Helper()
	h, clk := hub(t, "")
	ln, err := live.Listen("0", "")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Serve(h)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetGPUs(c)
	t.Cleanup(func() { srv.Close() })
	return h, clk, "http://" + ln.Addr().String()
}

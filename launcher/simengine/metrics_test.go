package simengine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeFamilies reads /metrics with the Prometheus text parser.
func scrapeFamilies(t *testing.T, p *engineProc) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := p.do(http.MethodGet, "/metrics", "", nil)
	if status != http.StatusOK {
		t.Fatalf("/metrics = %d", status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// scrape flattens /metrics to name{label=value,...} → value, leaving out
// the model_name and engine labels (checked to be present on every series)
// and giving histograms as their sample count.
func scrape(t *testing.T, p *engineProc) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for name, fam := range scrapeFamilies(t, p) {
		if !strings.HasPrefix(name, "vllm:") {
			continue
		}
		for _, m := range fam.GetMetric() {
			var labels []string
			seen := map[string]string{}
			for _, l := range m.GetLabel() {
				seen[l.GetName()] = l.GetValue()
				if l.GetName() != "model_name" && l.GetName() != "engine" {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
			}
			if seen["model_name"] != "sim-model" || seen["engine"] != "0" {
				t.Errorf("%s lacks model_name=sim-model / engine=0: %v", name, seen)
			}
			sort.Strings(labels)
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

func TestMetricsRunningAndWaitingUnderLoad(t *testing.T) {
	t.Parallel()
	// Every request hangs mid-answer, so the load holds still while we look.
	p := start(t, "--sim-key", faultKey(t), "--sim-chunk-tokens", "1", "--max-num-seqs", "2",
		"--sim-fault", "hang-after=0", "--sim-kv-tokens", "1000")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(textMessage("q", map[string]any{"stream": true}))
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/chat/completions", bytes.NewReader(b))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				<-ctx.Done()
				resp.Body.Close()
			}
		}()
	}
	// Once both running requests hang, each holds 1 prompt and 1 generated
	// token: KV usage 4 of 1000 tokens.
	var m map[string]float64
	p.eventually("2 running, 3 waiting, KV usage 0.004", func() bool {
		m = scrape(t, p)
		return m["vllm:num_requests_running"] == 2 && m["vllm:num_requests_waiting"] == 3 &&
			m["vllm:kv_cache_usage_perc"] == 4.0/1000
	})
	cancel()
	wg.Wait()
	p.eventually("the waiting requests leave with their clients", func() bool {
		m = scrape(t, p)
		return m["vllm:num_requests_waiting"] == 0
	})
	if m["vllm:num_requests_running"] != 2 {
		t.Errorf("hung requests running = %v, want 2", m["vllm:num_requests_running"])
	}
}

func TestMetricsCounters(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-key", faultKey(t))
	texts := []string{"first question", "second", "third one here"}
	wantPrompt := 0
	for _, q := range texts {
		if status, _ := p.chat(textMessage(q, nil)); status != http.StatusOK {
			t.Fatalf("chat %q = %d", q, status)
		}
		wantPrompt += promptTokens(q, 0, 0)
	}
	if status, _ := p.chat(textMessage("cut", map[string]any{"max_tokens": 1})); status != http.StatusOK {
		t.Fatal("max_tokens 1 failed")
	}
	wantPrompt += promptTokens("cut", 0, 0)
	m := scrape(t, p)
	for name, want := range map[string]float64{
		"vllm:request_success_total{finished_reason=stop}":   3,
		"vllm:request_success_total{finished_reason=length}": 1,
		"vllm:request_success_total{finished_reason=abort}":  0,
		"vllm:prompt_tokens_total":                           float64(wantPrompt),
		"vllm:generation_tokens_total":                       3*3 + 1,
		"vllm:time_to_first_token_seconds":                   4,
		"vllm:e2e_request_latency_seconds":                   4,
		"vllm:num_requests_running":                          0,
		"vllm:num_requests_waiting":                          0,
		"vllm:kv_cache_usage_perc":                           0,
	} {
		got, ok := m[name]
		if !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	fams := scrapeFamilies(t, p)
	if fams["vllm:time_to_first_token_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Error("vllm:time_to_first_token_seconds is not a histogram")
	}
}

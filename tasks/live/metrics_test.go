package live_test

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// scrape fetches /metrics and parses it with Prometheus's own text
// parser.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, body := get(t, &http.Client{}, url+"/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s: %s", resp.Status, body)
	}
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams, body
}

// series finds the family's series with these labels (a subset).
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType, labels map[string]string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	if f.GetType() != typ {
		t.Fatalf("%s is a %s, want a %s", name, f.GetType(), typ)
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s has no series %v", name, labels)
	return nil
}

func TestMetricsScrapeMatchesTheJournal(t *testing.T) {
	h, _, url := serve(t, "0", "")
	prior := answered(modelA, "pathology", "right", 100, 10, time.Second, 0) // a resumed run's: not this run's counters
	h.Post(begin(prior))
	records := []journal.Record{
		answered(modelA, "pathology", "right", 1000, 100, 300*time.Millisecond, 40*time.Millisecond),
		answered(modelA, "pathology", "wrong", 1200, 120, 2*time.Second, 400*time.Millisecond),
		answered(modelA, "pathology", "???", 900, 90, 30*time.Second, 3*time.Second),
		notRun(modelA, "sequence"),
		answered(modelB, "sequence", "right", 500, 50, time.Second, 200*time.Millisecond),
		answered(modelB, "sequence", "-", 500, 50, time.Second, 200*time.Millisecond),
	}
	for _, rec := range records {
		h.Post(live.Journaled{Record: rec})
	}
	h.Post(live.Assigned{Model: modelB, Replica: 0, TP: 1, GPUs: []int{0}, At: t0})
	for i, k := range []launcher.ReplicaEventKind{launcher.ReplicaStarting, launcher.ReplicaReady, launcher.ReplicaCrashed, launcher.ReplicaRestarting, launcher.ReplicaReady} {
		attempt := 0
		if i >= 3 {
			attempt = 1
		}
		h.Post(live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: t0.Add(time.Duration(i) * time.Second), Kind: k, Model: modelB, Attempt: attempt}})
	}
	await(t, h, "the journal and the engine", func(s *live.Snapshot) bool {
		return s.Totals.Answered+s.Totals.NotRun == 7 && len(s.Engines) == 1 && s.Engines[0].Restarts == 1
	})
	fams, body := scrape(t, url)

	// Expected values straight from the journal above.
	type key struct{ model, task, outcome string }
	want := map[key]float64{}
	prompt := map[key]float64{}
	for _, rec := range records {
		outcome := "not_run"
		if rec.Status == journal.StatusAnswered {
			outcome = map[live.Verdict]string{live.Correct: "correct", live.Wrong: "wrong", live.Invalid: "invalid", live.Ungraded: "ungraded"}[grade(rec)]
			prompt[key{rec.Model, rec.Task, ""}] += float64(rec.Answer.Usage.PromptTokens)
		}
		want[key{rec.Model, rec.Task, outcome}]++
	}
	for _, m := range []string{modelA, modelB} {
		for _, tk := range []string{"pathology", "sequence"} {
			for _, o := range []string{"correct", "wrong", "invalid", "ungraded", "not_run"} {
				got := series(t, fams, "npcorch_requests_total", dto.MetricType_COUNTER, map[string]string{"campaign": "test", "model": m, "task": tk, "outcome": o})
				if v := got.GetCounter().GetValue(); v != want[key{m, tk, o}] {
					t.Errorf("npcorch_requests_total{%s,%s,%s} = %g, want %g", m, tk, o, v, want[key{m, tk, o}])
				}
			}
			got := series(t, fams, "npcorch_prompt_tokens_total", dto.MetricType_COUNTER, map[string]string{"model": m, "task": tk})
			if v := got.GetCounter().GetValue(); v != prompt[key{m, tk, ""}] {
				t.Errorf("npcorch_prompt_tokens_total{%s,%s} = %g, want %g", m, tk, v, prompt[key{m, tk, ""}])
			}
		}
	}
	d := series(t, fams, "npcorch_request_duration_seconds", dto.MetricType_HISTOGRAM, map[string]string{"model": modelA, "task": "pathology"}).GetHistogram()
	if d.GetSampleCount() != 3 || math.Abs(d.GetSampleSum()-32.3) > 1e-9 {
		t.Errorf("duration: %d requests, %g s; want 3, 32.3 s", d.GetSampleCount(), d.GetSampleSum())
	}
	for _, b := range d.Bucket {
		if b.GetUpperBound() == 2.5 && b.GetCumulativeCount() != 2 {
			t.Errorf("duration le=2.5 holds %d, want 2", b.GetCumulativeCount())
		}
	}
	ttft := series(t, fams, "npcorch_time_to_first_token_seconds", dto.MetricType_HISTOGRAM, map[string]string{"model": modelB, "task": "sequence"}).GetHistogram()
	if ttft.GetSampleCount() != 2 || math.Abs(ttft.GetSampleSum()-0.4) > 1e-9 {
		t.Errorf("TTFT: %d, %g s; want 2, 0.4 s", ttft.GetSampleCount(), ttft.GetSampleSum())
	}
	// Remaining counts the campaign, the resumed run's answer included.
	if v := series(t, fams, "npcorch_requests_remaining", dto.MetricType_GAUGE, map[string]string{"model": modelA, "task": "pathology"}).GetGauge().GetValue(); v != 0 {
		t.Errorf("remaining of %s pathology = %g, want 4 asked - 1 before - 3 now = 0", modelA, v)
	}
	if v := series(t, fams, "npcorch_requests_remaining", dto.MetricType_GAUGE, map[string]string{"model": modelA, "task": "sequence"}).GetGauge().GetValue(); v != 5 {
		t.Errorf("remaining of %s sequence = %g, want 6 asked - 1 not run = 5", modelA, v)
	}
	if v := series(t, fams, "npcorch_requests_remaining", dto.MetricType_GAUGE, map[string]string{"model": modelB, "task": "sequence"}).GetGauge().GetValue(); v != 4 {
		t.Errorf("remaining of %s sequence = %g, want 6 - 2 = 4", modelB, v)
	}
	if v := series(t, fams, "npcorch_engine_restarts_total", dto.MetricType_COUNTER, map[string]string{"model": modelB, "replica": "0"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("restarts = %g, want 1", v)
	}
	for st, v := range map[string]float64{"ready": 1, "crashed": 0, "restarting": 0} {
		if got := series(t, fams, "npcorch_engine_state", dto.MetricType_GAUGE, map[string]string{"model": modelB, "state": st}).GetGauge().GetValue(); got != v {
			t.Errorf("npcorch_engine_state{%s} = %g, want %g", st, got, v)
		}
	}
	if got := series(t, fams, "npcorch_model_state", dto.MetricType_GAUGE, map[string]string{"model": modelB, "state": "serving"}).GetGauge().GetValue(); got != 1 {
		t.Errorf("%s is not serving in /metrics", modelB)
	}
	series(t, fams, "npcorch_campaign_eta_seconds", dto.MetricType_GAUGE, map[string]string{"campaign": "test"})

	// Prometheus's own naming rules (units, _total on counters).
	var npc strings.Builder
	for _, l := range strings.SplitAfter(body, "\n") {
		if strings.Contains(l, "npcorch_") {
			npc.WriteString(l)
		}
	}
	problems, err := promlint.New(strings.NewReader(npc.String())).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

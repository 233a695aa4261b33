package live

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The campaign's metrics (docs/live.md lists them). Counters and
// histograms count what this process journaled, so that they start at
// zero with it as Prometheus expects; gauges (remaining, ETA, states) are
// the campaign's, a resumed run's earlier answers included.
var (
	campaignLabel = []string{"campaign"}
	taskLabels    = []string{"campaign", "model", "task"}

	descRequests = prometheus.NewDesc("npcorch_requests_total",
		"Requests journaled by this run, by outcome: correct, wrong, invalid (the answer could not be read; scored wrong), ungraded (no gold label to grade by), not_run (every attempt failed for infrastructure reasons).",
		[]string{"campaign", "model", "task", "outcome"}, nil)
	descDuration = prometheus.NewDesc("npcorch_request_duration_seconds",
		"End-to-end time of the answered requests of this run.", taskLabels, nil)
	descTTFT = prometheus.NewDesc("npcorch_time_to_first_token_seconds",
		"Time to the first streamed token of the answered requests of this run.", taskLabels, nil)
	descPrompt = prometheus.NewDesc("npcorch_prompt_tokens_total",
		"Prompt tokens of the answered requests of this run, as the engines reported them.", taskLabels, nil)
	descCompletion = prometheus.NewDesc("npcorch_completion_tokens_total",
		"Completion tokens of the answered requests of this run, as the engines reported them.", taskLabels, nil)
	descRemaining = prometheus.NewDesc("npcorch_requests_remaining",
		"Requests of the campaign neither answered nor given up on (not run), earlier runs of a resumed campaign included.", taskLabels, nil)
	descPlanned = prometheus.NewDesc("npcorch_requests_planned",
		"Requests the campaign asks: (item, repeat) pairs.", taskLabels, nil)
	descModelState = prometheus.NewDesc("npcorch_model_state",
		"1 for the model's current state (waiting, starting, serving, done, partial, failed, stopped), 0 for the others.",
		[]string{"campaign", "model", "state"}, nil)
	descEngineState = prometheus.NewDesc("npcorch_engine_state",
		"1 for the engine replica's current state (the launcher's last event: assigned, starting, start-up, ready, crashed, restarting, failed, stopped), 0 for the others.",
		[]string{"campaign", "model", "replica", "state"}, nil)
	descRestarts = prometheus.NewDesc("npcorch_engine_restarts_total",
		"Restarts of the engine replica after a crash or stall.", []string{"campaign", "model", "replica"}, nil)
	descETA = prometheus.NewDesc("npcorch_campaign_eta_seconds",
		"Seconds the campaign has left at the pace of the last minute; absent before anything was measured.", campaignLabel, nil)
	descModelETA = prometheus.NewDesc("npcorch_model_eta_seconds",
		"Seconds the model has left at its pace of the last minute; absent while it has no pace.", []string{"campaign", "model"}, nil)
	descElapsed = prometheus.NewDesc("npcorch_campaign_elapsed_seconds",
		"Seconds since the campaign started.", campaignLabel, nil)
	descTokensPerS = prometheus.NewDesc("npcorch_model_completion_tokens_per_second",
		"The model's completion tokens per second over the last minute.", []string{"campaign", "model"}, nil)
)

var (
	modelStates  = []ModelState{ModelWaiting, ModelStarting, ModelServing, ModelDone, ModelPartial, ModelFailed, ModelStopped}
	engineStates = []string{"assigned", "starting", "start-up", "ready", "crashed", "restarting", "failed", "stopped"}
)

// collector exports the hub's latest snapshot.
type collector struct{ hub *Hub }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descDuration, descTTFT, descPrompt, descCompletion, descRemaining, descPlanned,
		descModelState, descEngineState, descRestarts, descETA, descModelETA, descElapsed, descTokensPerS} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.hub.Latest().Snap
	ch <- prometheus.MustNewConstMetric(descElapsed, prometheus.GaugeValue, s.ElapsedS, s.Campaign)
	if s.ETA.RemainingS != nil {
		ch <- prometheus.MustNewConstMetric(descETA, prometheus.GaugeValue, *s.ETA.RemainingS, s.Campaign)
	}
	for _, m := range s.Models {
		collectModel(ch, s.Campaign, m)
	}
	for _, e := range s.Engines {
		rep := strconv.Itoa(e.Replica)
		for _, st := range engineStates {
			ch <- prometheus.MustNewConstMetric(descEngineState, prometheus.GaugeValue, oneIf(e.State == st), s.Campaign, e.Model, rep, st)
		}
		ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(e.Restarts), s.Campaign, e.Model, rep)
	}
}

func collectModel(ch chan<- prometheus.Metric, campaign string, m Model) {
	for _, st := range modelStates {
		ch <- prometheus.MustNewConstMetric(descModelState, prometheus.GaugeValue, oneIf(m.State == st), campaign, m.Model, string(st))
	}
	if m.ETA.RemainingS != nil {
		ch <- prometheus.MustNewConstMetric(descModelETA, prometheus.GaugeValue, *m.ETA.RemainingS, campaign, m.Model)
	}
	ch <- prometheus.MustNewConstMetric(descTokensPerS, prometheus.GaugeValue, m.TokensPerS, campaign, m.Model)
	for _, t := range m.Tasks {
		l := []string{campaign, m.Model, t.Task}
		r := t.ThisRun
		for _, o := range []struct {
			name string
			n    int
		}{{"correct", r.Correct}, {"wrong", r.Wrong}, {"invalid", r.Invalid}, {"ungraded", r.Ungraded}, {"not_run", r.NotRun}} {
			ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(o.n), append(l, o.name)...)
		}
		ch <- prometheus.MustNewConstMetric(descPrompt, prometheus.CounterValue, float64(r.PromptTokens), l...)
		ch <- prometheus.MustNewConstMetric(descCompletion, prometheus.CounterValue, float64(r.CompletionTokens), l...)
		ch <- prometheus.MustNewConstMetric(descRemaining, prometheus.GaugeValue, float64(t.Remaining), l...)
		ch <- prometheus.MustNewConstMetric(descPlanned, prometheus.GaugeValue, float64(t.Requests), l...)
		ch <- histogram(descDuration, t.Duration, l)
		ch <- histogram(descTTFT, t.TTFT, l)
	}
}

func histogram(d *prometheus.Desc, h Histogram, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		buckets[b] = h.Counts[i]
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, labels...)
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

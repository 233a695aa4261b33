package simengine

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Prometheus series a vLLM V1 server exposes on /metrics,
// under vLLM's names and with its model_name and engine labels.
type metrics struct {
	registry   *prometheus.Registry
	running    prometheus.Gauge
	waiting    prometheus.Gauge
	kvUsage    prometheus.Gauge
	prompt     prometheus.Counter
	generation prometheus.Counter
	// preemptions stays at zero: the simulated scheduler admits a request
	// only when its prompt fits, and never evicts one.
	preemptions prometheus.Counter
	// work is the paced time of the prefills and decodes the engine did,
	// npcorch_sim:work_seconds_total: what an ideal client needs its slots
	// for.
	work    prometheus.Counter
	ttft    prometheus.Observer
	e2e     prometheus.Observer
	success *prometheus.CounterVec
}

// ttftBuckets are vLLM's buckets for vllm:time_to_first_token_seconds.
var ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
	2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

// e2eBuckets are vLLM's buckets for vllm:e2e_request_latency_seconds.
var e2eBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
	120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}

// newMetrics registers the engine's series for the served model name in a
// registry of their own.
func newMetrics(model string) *metrics {
	labels := prometheus.Labels{"model_name": model, "engine": "0"}
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{registry: reg}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
		f(g)
		return g
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		f(c)
		return c
	}
	histogram := func(name, help string, buckets []float64) prometheus.Observer {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: labels})
		f(h)
		return h
	}
	m.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
	m.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	m.kvUsage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	m.prompt = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.generation = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.preemptions = counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	m.work = counter("npcorch_sim:work_seconds_total", "Paced prefill and decode time of the requests (simulation only).")
	m.ttft = histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	m.e2e = histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2eBuckets)
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels,
	}, []string{"finished_reason"})
	f(m.success)
	for _, reason := range []string{"stop", "length", "abort"} {
		m.success.WithLabelValues(reason) // expose zero counts, as vLLM does
	}
	return m
}

// watchOccupancy exposes the scheduler's occupancy integrals, up to the
// moment of each scrape, under npcorch_sim:* names that no vLLM has: a
// benchmark or test reads from them how full a client kept the engine.
func (m *metrics) watchOccupancy(s *scheduler, model string) {
	labels := prometheus.Labels{"model_name": model, "engine": "0"}
	series := []struct {
		name, help string
		read       func(occupancy) float64
	}{
		{"npcorch_sim:slot_seconds_total", "Integral of the running requests over time: busy slot-seconds (simulation only).",
			func(o occupancy) float64 { return o.Slot }},
		{"npcorch_sim:full_seconds_total", "Time with every slot running or requests waiting (simulation only).",
			func(o occupancy) float64 { return o.Full }},
		{"npcorch_sim:serving_seconds_total", "Time with requests running or waiting (simulation only).",
			func(o occupancy) float64 { return o.Serving }},
	}
	for _, c := range series {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help, ConstLabels: labels},
			func() float64 { return c.read(s.occupancy()) }))
	}
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "npcorch_sim:max_num_seqs",
		Help: "The engine's --max-num-seqs (simulation only).", ConstLabels: labels},
		func() float64 { return float64(s.maxSeqs) }))
}

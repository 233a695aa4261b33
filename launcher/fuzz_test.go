package launcher

import "testing"

// FuzzParseLoad: any /metrics body gives the stall watchdog a reading or
// an error, never a panic.
func FuzzParseLoad(f *testing.F) {
	f.Add([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 2\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} 1234\n"))
	f.Add([]byte("sglang:num_running_reqs 1\nsglang:generation_tokens_total 5\n"))
	f.Add([]byte("vllm:num_requests_running NaN\nvllm:generation_tokens +Inf\n"))
	f.Add([]byte("# TYPE x histogram\nx_bucket{le=\"+Inf\"} 1\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := parseLoad(body)
		if err == nil && (l.running < 0 && l.running == l.running) {
			// Negative counts are the engine's problem, but must not crash
			// the watchdog either: observe them once.
			w := stallWatch{window: 1}
			_, _ = w.observe(l, w.progress)
		}
	})
}

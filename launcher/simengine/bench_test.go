package simengine_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// benchEngine starts an engine whose latency model costs nothing, so the
// benchmark measures the HTTP, JSON and scheduling overhead per request.
func benchEngine(b *testing.B) (*engineProc, []byte, []byte) {
	p := start(b, "--sim-prefill-tps", "1e12", "--sim-decode-tps", "1e12", "--disable-uvicorn-access-log",
		"--max-num-seqs", "1024")
	plain, _ := json.Marshal(textMessage("Is there a tumour? Answer \\boxed{0} or \\boxed{1}.", map[string]any{"max_tokens": 64}))
	stream, _ := json.Marshal(textMessage("Is there a tumour? Answer \\boxed{0} or \\boxed{1}.",
		map[string]any{"max_tokens": 64, "stream": true, "stream_options": map[string]any{"include_usage": true}}))
	return p, plain, stream
}

func post(b *testing.B, client *http.Client, url string, body []byte) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkChat measures requests per second against one engine process.
func BenchmarkChat(b *testing.B) {
	p, plain, stream := benchEngine(b)
	url := p.base + "/v1/chat/completions"
	for _, c := range []struct {
		name string
		body []byte
	}{{"plain", plain}, {"stream", stream}} {
		b.Run(c.name+"/serial", func(b *testing.B) {
			client := &http.Client{}
			for b.Loop() {
				post(b, client, url, c.body)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				client := &http.Client{}
				for pb.Next() {
					post(b, client, url, c.body)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

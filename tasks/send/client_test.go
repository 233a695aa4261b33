package send_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

func testSettings() configs.ClientSettings {
	// Deadlines far above what a loaded CI machine needs to answer; the
	// timeout cases hang until the client gives up.
	return configs.ClientSettings{ConnectTimeout: time.Second, FirstTokenTimeout: time.Second,
		ChunkTimeout: time.Second, TotalTimeout: 10 * time.Second}
}

// sse writes one data line and flushes it.
func sse(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func chunk(content, finish string) string {
	fr := "null"
	if finish != "" {
		fr = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"M","choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`, content, fr)
}

// hang blocks a handler until the client goes away. The server notices a
// closed connection only once the request body has been read.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

func serve(t *testing.T, h http.HandlerFunc) launcher.Endpoint {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return launcher.Endpoint{Model: "M", BaseURL: srv.URL + "/v1", APIKey: "secret", MaxNumSeqs: 4}
}

func body() openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: "M", MaxTokens: 16,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
}

// TestRequestsOwnSamplingIsSentOnce: a request that sets its own
// temperature or top-p sends that value, once; the greedy defaults fill
// only what it leaves out. Before, the client wrote temperature 0 and
// top-p 1 in front of every body, and a request with its own temperature
// carried the key twice (engines read the last; a JSON parser that keeps
// the first would have decoded greedily).
func TestRequestsOwnSamplingIsSentOnce(t *testing.T) {
	for _, tc := range []struct {
		temperature, topP float32
		want              string
	}{
		{0, 0, `"temperature":0,"top_p":1,`},
		{0.7, 0, `"top_p":1,`},
		{0, 0.9, `"temperature":0,`},
		{0.7, 0.9, ``},
	} {
		var raw []byte
		ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
			raw, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			sse(w, chunk("ok", "stop"))
			sse(w, "[DONE]")
		})
		b := body()
		b.Temperature, b.TopP = tc.temperature, tc.topP
		if _, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, b); err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(raw, []byte(`"temperature"`)); n > 1 {
			t.Errorf("temperature %v: %d temperature keys in %s", tc.temperature, n, raw)
		}
		if n := bytes.Count(raw, []byte(`"top_p"`)); n != 1 {
			t.Errorf("top_p %v: %d top_p keys in %s, want 1", tc.topP, n, raw)
		}
		if !bytes.HasPrefix(raw, []byte("{"+tc.want)) {
			t.Errorf("temperature %v, top_p %v: body starts %.60s, want {%s", tc.temperature, tc.topP, raw, tc.want)
		}
		var got struct {
			Temperature *float64 `json:"temperature"`
			TopP        *float64 `json:"top_p"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Temperature == nil || got.TopP == nil ||
			float32(*got.Temperature) != tc.temperature || (tc.topP == 0 && *got.TopP != 1) || (tc.topP != 0 && float32(*got.TopP) != tc.topP) {
			t.Errorf("temperature %v, top_p %v: sent %s", tc.temperature, tc.topP, raw)
		}
	}
}

func TestStreamCollectsAnswerUsageAndSendsTemperatureZero(t *testing.T) {
	var got map[string]any
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "no key", 401)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, `{"id":"c","object":"chat.completion.chunk","model":"M","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		sse(w, `{"id":"c","object":"chat.completion.chunk","model":"M","choices":[{"index":0,"delta":{"reasoning":"think"},"finish_reason":null}]}`)
		sse(w, chunk("\\boxed", ""))
		sse(w, chunk("{C}", "stop"))
		sse(w, `{"id":"c","object":"chat.completion.chunk","model":"M","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105,"prompt_tokens_details":{"cached_tokens":40}}}`)
		sse(w, "[DONE]")
	})
	ans, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, body())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Content != `\boxed{C}` || ans.Reasoning != "think" || ans.FinishReason != "stop" {
		t.Errorf("answer = %+v", ans)
	}
	if w, ok := ans.Usage.WorkTokens(); ans.Usage.PromptTokens != 100 || ans.Usage.CompletionTokens != 5 ||
		ans.Usage.CachedTokens == nil || *ans.Usage.CachedTokens != 40 || !ok || w != 65 {
		t.Errorf("usage = %+v", ans.Usage)
	}
	if ans.Timing.Chunks != 3 || ans.Timing.TTFTms <= 0 || ans.Timing.E2Ems < ans.Timing.TTFTms {
		t.Errorf("timing = %+v", ans.Timing)
	}
	if temp, ok := got["temperature"]; !ok || temp != 0.0 {
		t.Errorf("temperature sent = %v (present %v), want an explicit 0", temp, ok)
	}
	// Explicit, so that no engine default (generation_config.json) applies.
	if topP, ok := got["top_p"]; !ok || topP != 1.0 {
		t.Errorf("top_p sent = %v (present %v), want an explicit 1", topP, ok)
	}
	if got["stream"] != true {
		t.Errorf("stream = %v", got["stream"])
	}
}

func TestStreamFailures(t *testing.T) {
	cases := []struct {
		name string
		h    http.HandlerFunc
		kind string
	}{
		{"first token timeout", func(w http.ResponseWriter, r *http.Request) {
			hang(r)
		}, inference.FailFirstToken},
		{"stall between chunks", func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk("a", ""))
			hang(r)
		}, inference.FailChunk},
		{"error inside a 200 stream", func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk("a", ""))
			sse(w, `{"error":{"object":"error","message":"engine died","type":"InternalServerError","code":500}}`)
		}, inference.FailStream},
		{"stream ends without finish reason", func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk("a", ""))
		}, inference.FailTruncated},
		{"503", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			io.WriteString(w, `{"object":"error","message":"busy","type":"ServiceUnavailable","code":503}`)
		}, inference.FailServer},
		{"400 too many images", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"object":"error","message":"At most 4 image(s) may be provided in one prompt. Set --limit-mm-per-prompt to increase this limit.","type":"BadRequestError","code":400}`)
		}, inference.FailRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep := serve(t, c.h)
			_, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, body())
			var f *inference.AttemptFailure
			if !errors.As(err, &f) || f.Kind != c.kind {
				t.Fatalf("err = %v, want a %s failure", err, c.kind)
			}
			if f.Retryable() == (c.kind == inference.FailRejected) {
				t.Errorf("%s retryable = %v", c.kind, f.Retryable())
			}
		})
	}
}

func TestStreamConnectionRefused(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, err := inference.NewClient(testSettings()).Stream(context.Background(), launcher.Endpoint{BaseURL: "http://" + addr + "/v1"}, body())
	var f *inference.AttemptFailure
	if !errors.As(err, &f) || f.Kind != inference.FailConnect {
		t.Fatalf("err = %v, want connect failure", err)
	}
}

func TestStreamTotalTimeout(t *testing.T) {
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 50; i++ {
			sse(w, chunk("a", ""))
			time.Sleep(50 * time.Millisecond)
		}
	})
	s := testSettings()
	s.TotalTimeout = 400 * time.Millisecond
	_, err := inference.NewClient(s).Stream(context.Background(), ep, body())
	var f *inference.AttemptFailure
	if !errors.As(err, &f) || f.Kind != inference.FailTotal {
		t.Fatalf("err = %v, want total timeout", err)
	}
	if !strings.Contains(f.Error(), "total timeout") {
		t.Errorf("message %q", f.Error())
	}
}

// TestErrorBodiesBothForms: vLLM answers errors as {"error": {...}} since
// PR #22099 and as a flat {"object": "error", ...} before it; the failure
// keeps the engine's message and the HTTP status either way, and the
// auth middleware's {"error": "Unauthorized"} too.
func TestErrorBodiesBothForms(t *testing.T) {
	const msg = "At most 4 image(s) may be provided in one prompt. Set --limit-mm-per-prompt to increase this limit."
	cases := []struct {
		name, body string
		status     int
		kind, want string
	}{
		{"nested 400", `{"error":{"message":"` + msg + `","type":"BadRequestError","param":null,"code":400}}`, 400, inference.FailRejected,
			"rejected (HTTP 400): " + msg + " [BadRequestError]"},
		{"flat 400", `{"object":"error","message":"` + msg + `","type":"BadRequestError","param":null,"code":400}`, 400, inference.FailRejected,
			"rejected (HTTP 400): " + msg + " [BadRequestError]"},
		{"nested 503", `{"error":{"message":"busy","type":"ServiceUnavailableError","param":null,"code":503}}`, 503, inference.FailServer,
			"server_error (HTTP 503): busy [ServiceUnavailableError]"},
		{"flat 500", `{"object":"error","message":"EngineCore died","type":"InternalServerError","code":500}`, 500, inference.FailServer,
			"server_error (HTTP 500): EngineCore died [InternalServerError]"},
		{"unauthorized", `{"error":"Unauthorized"}`, 401, inference.FailRejected, "rejected (HTTP 401): Unauthorized"},
		{"FastAPI detail", `{"detail":"Not Found"}`, 404, inference.FailRejected, "rejected (HTTP 404): Not Found"},
		{"html", `<html>bad gateway</html>`, 502, inference.FailServer, `server_error (HTTP 502): "<html>bad gateway</html>"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			_, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, body())
			var f *inference.AttemptFailure
			if !errors.As(err, &f) || f.Kind != c.kind || f.Status != c.status || f.Error() != c.want {
				t.Errorf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestStreamErrorKeepsEngineMessageAndCode: vLLM reports a failure after
// its 200 as `data: {"error": {...}}` then `data: [DONE]`
// (create_streaming_error_response). go-openai's reader takes that line
// before the client's own chunk loop; the failure, and the journal's
// record of it, must still say what the engine said and its code.
func TestStreamErrorKeepsEngineMessageAndCode(t *testing.T) {
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, chunk("The", ""))
		sse(w, `{"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}`)
		sse(w, "[DONE]")
	})
	_, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, body())
	var f *inference.AttemptFailure
	want := "stream_error (code 500 inside the 200 stream): Internal server error [InternalServerError]"
	if !errors.As(err, &f) || f.Kind != inference.FailStream || f.Status != 500 || f.Error() != want || !f.Retryable() {
		t.Fatalf("err = %v\nwant %s (retryable)", err, want)
	}

	// The same through the runner: the not-run record keeps it.
	run := t.TempDir()
	r := testRunner(t, run)
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	items := []tasks.Item{{ID: "card/P01/x", Task: npcbench.Card, Patient: "P01", Gold: tasks.Gold{Label: "1"}}}
	if _, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: t.TempDir()},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items)}); err != nil {
		t.Fatal(err)
	}
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Records) != 1 {
		t.Fatalf("journal has %d records", len(st.Records))
	}
	for _, rec := range st.Records {
		if rec.Status != journal.StatusNotRun || len(rec.Failures) == 0 || rec.Failures[0] != want {
			t.Errorf("record %+v: want not_run with failures %q", rec, want)
		}
	}
}

// TestReasoningReadOnce: vLLM copies delta.reasoning into the deprecated
// delta.reasoning_content; the reasoning must not come out twice. An
// engine that sends only reasoning_content (SGLang, older vLLM) is read.
func TestReasoningReadOnce(t *testing.T) {
	for name, delta := range map[string]string{
		"both":                   `{"reasoning":"think","reasoning_content":"think"}`,
		"reasoning only":         `{"reasoning":"think"}`,
		"reasoning_content only": `{"reasoning_content":"think"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				sse(w, `{"id":"c","object":"chat.completion.chunk","model":"M","choices":[{"index":0,"delta":`+delta+`,"finish_reason":null}]}`)
				sse(w, chunk("1", "stop"))
				sse(w, "[DONE]")
			})
			ans, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, body())
			if err != nil || ans.Reasoning != "think" || ans.Content != "1" {
				t.Errorf("answer %+v, %v; want reasoning \"think\" once", ans, err)
			}
		})
	}
}

// TestScrapeLoadReadsEitherKVCacheName: vLLM forks older than about 0.10
// serve vllm:gpu_cache_usage_perc instead of vllm:kv_cache_usage_perc,
// and releases in between served both; the load reads the gauge once.
func TestScrapeLoadReadsEitherKVCacheName(t *testing.T) {
	for name, body := range map[string]string{
		"current":  "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.42\n",
		"old fork": "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{model_name=\"m\"} 0.42\n",
		"both": "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{model_name=\"m\"} 0.42\n" +
			"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"m\"} 0.42\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n"+body)
			}))
			defer srv.Close()
			l, err := inference.ScrapeLoad(context.Background(), srv.Client(), srv.URL+"/metrics")
			if err != nil || l.KVCache != 0.42 || l.Running != 3 {
				t.Errorf("load %+v, %v; want KV cache 0.42 and 3 running", l, err)
			}
		})
	}
}

// An answer's connection carries the next request even when the engine
// writes the chunked body's last chunk after [DONE] in a packet of its own
// (uvicorn ends the body after the stream's last line; so does Go's
// server once a handler returns): net/http reuses a connection only once
// its body was read to the end. Before, each such answer cost a new
// connection. An engine that never ends the body after [DONE] costs the
// connection, not the answer.
func TestAnswersShareOneConnection(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	hold := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, chunk("A", "stop"))
		sse(w, "[DONE]")
		if req.Model == "hold" {
			select { // never ends the body: the client must not wait for it
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		time.Sleep(5 * time.Millisecond) // the last chunk goes alone
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(func() { close(hold); srv.Close() })
	ep := launcher.Endpoint{Model: "M", BaseURL: srv.URL + "/v1", APIKey: "secret", MaxNumSeqs: 4}
	c := inference.NewClient(testSettings())
	for i := range 5 {
		if ans, err := c.Stream(context.Background(), ep, body()); err != nil || ans.Content != "A" {
			t.Fatalf("request %d: %+v, %v", i+1, ans, err)
		}
	}
	mu.Lock()
	if conns != 1 {
		t.Errorf("5 answers in turn opened %d connections, want 1", conns)
	}
	mu.Unlock()

	held := body()
	held.Model = "hold"
	start := time.Now()
	ans, err := c.Stream(context.Background(), ep, held)
	if err != nil || ans.Content != "A" || ans.FinishReason != "stop" {
		t.Fatalf("answer of an engine that keeps the body open: %+v, %v", ans, err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("the answer took %v: the client waited for a body that never ends", waited)
	}
}

// TestTransportFailuresAreNotTruncated: an error before any stream opened
// (a URL without a scheme, an HTTPS client against a plain HTTP server) is
// a transport failure, retried like any infrastructure failure and never
// stored. Before, every such error was labelled "truncated", which says
// the engine began an answer and cut it short.
func TestTransportFailuresAreNotTruncated(t *testing.T) {
	plain := serve(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, chunk("a", "stop"))
	})
	for name, base := range map[string]string{
		"no scheme":          "localhost:8000/v1",
		"https against http": strings.Replace(plain.BaseURL, "http://", "https://", 1),
	} {
		t.Run(name, func(t *testing.T) {
			ep := plain
			ep.BaseURL = base
			_, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, body())
			var f *inference.AttemptFailure
			if !errors.As(err, &f) || f.Kind != inference.FailTransport || !f.Retryable() {
				t.Fatalf("err = %v, want a retryable %s failure", err, inference.FailTransport)
			}
		})
	}
}

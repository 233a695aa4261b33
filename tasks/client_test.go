package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
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

func serve(t *testing.T, h http.HandlerFunc) Endpoint {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return Endpoint{Name: "M#0", BaseURL: srv.URL + "/v1", APIKey: "secret", MaxNumSeqs: 4}
}

func body() openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: "M", MaxTokens: 16,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
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
	ans, err := NewClient(testSettings()).Stream(context.Background(), ep, body())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Content != `\boxed{C}` || ans.Reasoning != "think" || ans.FinishReason != "stop" {
		t.Errorf("answer = %+v", ans)
	}
	if ans.Usage != (Usage{PromptTokens: 100, CompletionTokens: 5, CachedTokens: 40}) || ans.Usage.WorkTokens() != 65 {
		t.Errorf("usage = %+v", ans.Usage)
	}
	if ans.Timing.Chunks != 3 || ans.Timing.TTFTms <= 0 || ans.Timing.E2Ems < ans.Timing.TTFTms {
		t.Errorf("timing = %+v", ans.Timing)
	}
	if temp, ok := got["temperature"]; !ok || temp != 0.0 {
		t.Errorf("temperature sent = %v (present %v), want an explicit 0", temp, ok)
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
		}, FailFirstToken},
		{"stall between chunks", func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk("a", ""))
			hang(r)
		}, FailChunk},
		{"error inside a 200 stream", func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk("a", ""))
			sse(w, `{"error":{"object":"error","message":"engine died","type":"InternalServerError","code":500}}`)
		}, FailStream},
		{"stream ends without finish reason", func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk("a", ""))
		}, FailTruncated},
		{"503", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			io.WriteString(w, `{"object":"error","message":"busy","type":"ServiceUnavailable","code":503}`)
		}, FailServer},
		{"400 too many images", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"object":"error","message":"At most 4 image(s) may be provided in one prompt. Set --limit-mm-per-prompt to increase this limit.","type":"BadRequestError","code":400}`)
		}, FailRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep := serve(t, c.h)
			_, err := NewClient(testSettings()).Stream(context.Background(), ep, body())
			var f *Failure
			if !errors.As(err, &f) || f.Kind != c.kind {
				t.Fatalf("err = %v, want a %s failure", err, c.kind)
			}
			if f.Retryable() == (c.kind == FailRejected) {
				t.Errorf("%s retryable = %v", c.kind, f.Retryable())
			}
		})
	}
}

func TestStreamConnectionRefused(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, err := NewClient(testSettings()).Stream(context.Background(), Endpoint{BaseURL: "http://" + addr + "/v1"}, body())
	var f *Failure
	if !errors.As(err, &f) || f.Kind != FailConnect {
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
	_, err := NewClient(s).Stream(context.Background(), ep, body())
	var f *Failure
	if !errors.As(err, &f) || f.Kind != FailTotal {
		t.Fatalf("err = %v, want total timeout", err)
	}
	if !strings.Contains(f.Error(), "total timeout") {
		t.Errorf("message %q", f.Error())
	}
}

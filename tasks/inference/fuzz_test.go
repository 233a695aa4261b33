package inference

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
)

// FuzzStream serves arbitrary bytes as an SSE body to the streaming client:
// it must end with an answer that has a finish reason, or a *Failure,
// never a panic or a hang.
func FuzzStream(f *testing.F) {
	chunk := func(s string) string { return "data: " + s + "\n\n" }
	f.Add([]byte(chunk(`{"choices":[{"delta":{"content":"\\boxed{1}"}}]}`) + chunk(`{"choices":[{"delta":{},"finish_reason":"stop"}]}`) +
		chunk(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}}`) + chunk("[DONE]")))
	f.Add([]byte(chunk(`{"choices":[{"delta":{"reasoning":"hm","content":"<think>a</think>B"},"finish_reason":"length"}]}`) + chunk("[DONE]")))
	f.Add([]byte(chunk(`{"error":{"message":"boom","code":500}}`)))
	f.Add([]byte(chunk(`{"choices":[{"delta":{"content":"x"`)))
	f.Add([]byte("event: ping\n\n: comment\n\ndata:\n\n" + chunk("[DONE]")))
	f.Add([]byte("data: {\"object\":\"error\",\"message\":\"m\"}\n\n"))
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(*body.Load())
	}))
	f.Cleanup(srv.Close)
	c := NewClient(configs.ClientSettings{ConnectTimeout: time.Second, FirstTokenTimeout: 5 * time.Second,
		ChunkTimeout: 5 * time.Second, TotalTimeout: 10 * time.Second})
	ep := launcher.Endpoint{Model: "fuzz", BaseURL: srv.URL + "/v1"}
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "?"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		body.Store(&data)
		ans, err := c.Stream(context.Background(), ep, req)
		if err != nil {
			var fail *AttemptFailure
			if !errors.As(err, &fail) {
				t.Fatalf("error is not a *Failure: %T %v", err, err)
			}
			return
		}
		if ans.FinishReason == "" {
			t.Fatal("answer without a finish reason")
		}
		if strings.Contains(ans.Content, "</think>") && strings.HasPrefix(strings.TrimSpace(ans.Content), "<think>") {
			t.Fatalf("reasoning left in the answer: %q", ans.Content)
		}
	})
}

// FuzzSplitReasoning: the answer never keeps a leading think block, and
// nothing of the content is invented.
func FuzzSplitReasoning(f *testing.F) {
	f.Add("<think>hm</think> \\boxed{A}", "")
	f.Add("</think>B", "r")
	f.Add("<think>unclosed", "")
	f.Fuzz(func(t *testing.T, content, reasoning string) {
		ans, thought := SplitReasoning(content, reasoning)
		if strings.HasPrefix(ans, "<think>") {
			t.Fatalf("answer %q still opens a think block", ans)
		}
		if !strings.Contains(content, ans) {
			t.Fatalf("answer %q is not part of the content %q", ans, content)
		}
		if reasoning != "" && !strings.Contains(thought, strings.TrimSpace(reasoning)) {
			t.Fatalf("reasoning %q lost from %q", reasoning, thought)
		}
	})
}

// FuzzParseEngineError: any error body gives an engine error or none,
// never a panic, and its text is never empty.
func FuzzParseEngineError(f *testing.F) {
	for _, seed := range []string{
		`{"error":{"message":"m","type":"BadRequestError","param":null,"code":400}}`,
		`{"object":"error","message":"m","type":"t","code":"429"}`,
		`{"error":"Unauthorized"}`, `{"detail":[{"loc":["body"]}]}`, `{"error":null}`, `[1]`, `{"message":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if e, ok := parseEngineError(body); ok && e.text() == "" {
			t.Errorf("%q: an engine error with no text", body)
		}
		_ = streamFailure(body).Error()
		_ = bodySnippet(body)
	})
}

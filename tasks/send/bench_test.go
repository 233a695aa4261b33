package send_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

// sseAnswer renders a vLLM-style stream of answer, one event per four
// characters, with the finish and usage chunks and [DONE].
func sseAnswer(answer string) []string {
	head := `{"id":"chatcmpl-18aef065e2fe9d096510dd73effac7e1","object":"chat.completion.chunk","created":1796041035,"model":"sim-model","choices":[`
	events := []string{head + `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`}
	for len(answer) > 0 {
		n := min(4, len(answer))
		events = append(events, head+fmt.Sprintf(`{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}]}`, answer[:n]))
		answer = answer[n:]
	}
	events = append(events, head+`{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}`,
		head+`],"usage":{"prompt_tokens":64243,"total_tokens":64334,"completion_tokens":91,"prompt_tokens_details":{"cached_tokens":64240}}}`,
		"[DONE]")
	return events
}

// BenchmarkFileRequest builds and streams one 80-image file:// T-staging
// request per iteration against a server that replays a 95-event answer
// (role, 91 content pieces, finish, usage, [DONE]), as the sim engine
// streams the benchmark's T-staging answer.
func BenchmarkFileRequest(b *testing.B) {
	root := b.TempDir()
	images := make([]dataset.Image, 80)
	for i := range images {
		images[i] = imageFile(b, root, i, true)
	}
	answer := strings.Repeat(`{"x":1} `, 45) + `T3` // 91 four-character pieces, as the sim engine's 91 tokens
	events := sseAnswer(answer)
	if len(events) != 95 {
		b.Fatalf("the replayed answer has %d events, want the sim engine's 95", len(events))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprintf(w, "data: %s\n\n", e)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	m := simModelConfig(b)
	s := m.Tasks[npcbench.TGroups]
	s.MaxImages = 0
	m.Tasks[npcbench.TGroups] = s
	bld := tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	if err != nil {
		b.Fatal(err)
	}
	item := tasks.Item{ID: "t_groups/B", Task: npcbench.TGroups, Patient: "B", Images: images, Gold: tasks.Gold{Label: "T3"}}
	c := inference.NewClient(engineSettings())
	defer c.Close()
	ep := launcher.Endpoint{Model: "b", BaseURL: srv.URL + "/v1"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req, err := bld.Build(prompts, item, i, nil)
		if err != nil {
			b.Fatal(err)
		}
		ans, err := c.Send(context.Background(), ep, req.Body, req.Inline)
		if err != nil {
			b.Fatal(err)
		}
		if !strings.HasSuffix(ans.Content, "T3") {
			b.Fatalf("answer %q", ans.Content)
		}
	}
}

package send_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/judge"
)

// judgeItem is the judge's first-attempt item of one answer and one
// criterion.
func judgeItem(t *testing.T, reg *tasks.Registry, answer string) tasks.Item {
	t.Helper()
	gen := tasks.Item{ID: "o1/C1/Q1", Task: "o1", Patient: "C1", Consult: &tasks.Consult{CaseID: "C1", Case: "Case text.", Question: "What next?",
		Criteria: []dataset.Criterion{{ID: "m1", Kind: dataset.KindMajor, Text: "Recommends surgery first."}}}}
	st := &journal.State{Records: map[string]journal.Record{"k": {Key: "k", Item: gen.ID, Task: "o1", Model: "G", Status: journal.StatusAnswered,
		Answer: &inference.Answer{Content: answer}}}}
	jt, err := reg.Task("o1judge")
	if err != nil {
		t.Fatal(err)
	}
	items := judge.Items(jt, []tasks.Item{gen}, st, []string{"G", "absent"})
	if len(items) != 1 || items[0].ID != "o1judge/G/C1/Q1/m1" || items[0].Task != "o1judge" {
		t.Fatalf("judge items %+v, want one, o1judge/G/C1/Q1/m1", items)
	}
	return items[0]
}

// TestJudgeRequestsFollowThePaper: "GPT-OSS-120B with greedy decoding,
// medium reasoning effort"; "An incomplete or invalid judgment is retried
// with an 8,192-token allowance and then with JSON-schema-constrained
// decoding".
func TestJudgeRequestsFollowThePaper(t *testing.T) {
	reg := benchmark()
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	first := judgeItem(t, reg, "Operate at once.")
	// The judge's answer cannot be read: the retry is one rung up.
	st := &journal.State{Records: map[string]journal.Record{"j": {Key: "j", Item: first.ID, Task: "o1judge", Model: "J",
		Status: journal.StatusAnswered, Answer: &inference.Answer{Content: `{"criteria_met": "yes"}`}}}}
	second := judge.Retries([]tasks.Item{first}, st, "J")
	if len(second) != 1 || second[0].ID != first.ID+"#retry1" {
		t.Fatalf("retries %+v, want %s#retry1", second, first.ID)
	}
	st.Records["j2"] = journal.Record{Key: "j2", Item: second[0].ID, Task: "o1judge", Model: "J", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "no JSON"}}
	third := judge.Retries(second, st, "J")
	st.Records["j3"] = journal.Record{Key: "j3", Item: third[0].ID, Task: "o1judge", Model: "J", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "{}"}}
	if more := judge.Retries(third, st, "J"); len(more) != 0 {
		t.Errorf("a verdict unreadable at the last rung is retried again: %+v", more)
	}
	if ok := judge.Retries([]tasks.Item{first}, &journal.State{Records: map[string]journal.Record{"j": {Key: "j", Item: first.ID,
		Task: "o1judge", Model: "J", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: `{"explanation": "x", "criteria_met": false}`}}}}, "J"); len(ok) != 0 {
		t.Errorf("a valid verdict is retried: %+v", ok)
	}

	jm := configs.Model{Name: "J", Engine: configs.Engine{Kind: configs.EngineSim}, Tasks: map[string]configs.TaskSettings{"o1judge": {MaxTokens: 2048}}}
	for i, c := range []struct {
		it     tasks.Item
		effort string
		want   []string
		not    []string
	}{
		{first, "", []string{`"max_tokens":2048`, `"reasoning_effort":"medium"`}, []string{"response_format", "temperature", "top_p"}},
		{second[0], "high", []string{`"max_tokens":8192`, `"reasoning_effort":"high"`}, []string{"response_format"}},
		{third[0], "none", []string{`"max_tokens":8192`, `"response_format":{"type":"json_schema","json_schema":{"name":"verdict"`, `"strict":true`, `"criteria_met"`}, []string{"reasoning_effort"}},
	} {
		jm.ReasoningEffort = c.effort
		req, err := tasks.RequestBuilder{Model: jm}.Build(prompts, c.it, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(req.Body)
		for _, w := range c.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("rung %d: body lacks %s: %s", i, w, body)
			}
		}
		for _, n := range c.not {
			if strings.Contains(string(body), n) {
				t.Errorf("rung %d: body has %s: %s", i, n, body)
			}
		}
		// On the wire, greedy with top-p 1, each said once (a judge used to
		// send its own temperature after the client's 0, and the engine
		// read the last).
		var wire []byte
		ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
			wire, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			sse(w, chunk(`{"criteria_met": true, "explanation": "x"}`, "stop"))
			sse(w, "[DONE]")
		})
		if _, err := inference.NewClient(testSettings()).Stream(context.Background(), ep, req.Body); err != nil {
			t.Fatal(err)
		}
		var sent map[string]any
		if err := json.Unmarshal(wire, &sent); err != nil || sent["temperature"] != 0.0 || sent["top_p"] != 1.0 ||
			strings.Count(string(wire), `"temperature"`) != 1 || strings.Count(string(wire), `"top_p"`) != 1 {
			t.Errorf("rung %d: sent %s, want temperature 0 and top_p 1, each once (%v)", i, wire, err)
		}
		if !strings.Contains(req.Prompt, "Assistant Response:\nOperate at once.\nRubric Item:\n[NEGATIVE ERROR CRITERION, major error, -2 points] Recommends surgery first.") {
			t.Errorf("rung %d: prompt does not show the response and the signed criterion:\n%s", i, req.Prompt)
		}
	}
}

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
	"github.com/npcorch/npcorch/tasks/score"
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

// TestANullVerdictIsNoVerdict: prompt A15 says ""criteria_met" must be a
// boolean" and ""explanation" must be a brief string". A judge that
// answers "criteria_met": null has given no verdict: it climbs the retry
// ladder like any unreadable one, and a null still there at the last rung
// leaves the item out of V with its reason — never a valid "not met" that
// would spare the response its major error. A null explanation is refused
// as a list is.
func TestANullVerdictIsNoVerdict(t *testing.T) {
	reg := benchmark()
	raw := &dataset.Raw{Format: dataset.RawFormat, Name: "o1", Consultations: []dataset.ConsultCase{{ID: "C1", Case: "Case text.",
		Questions: []dataset.ConsultQuestion{{ID: "Q1", Question: "What next?", Tags: []string{dataset.TagTx}, Criteria: []dataset.Criterion{
			{ID: "p1", Kind: dataset.KindPositive, Section: dataset.SectionCore, Weight: 10, Text: "Recommends induction chemotherapy."},
			{ID: "m1", Kind: dataset.KindMajor, Text: "Recommends surgery first."}}}}}}}
	items, problems, err := tasks.BuildItems(reg, raw, &dataset.Prepared{Format: dataset.PreparedFormat}, []string{"o1"})
	if err != nil || len(problems) != 0 || len(items) != 1 {
		t.Fatalf("items %+v, problems %v, %v", items, problems, err)
	}
	st := &journal.State{Records: map[string]journal.Record{}}
	add := func(model string, it tasks.Item, content string) {
		key := model + "|" + it.ID
		st.Records[key] = journal.Record{Key: key, Item: it.ID, Task: it.Task, Patient: it.Patient, Model: model,
			Status: journal.StatusAnswered, Answer: &inference.Answer{Content: content}}
	}
	add("G", items[0], "Induction chemotherapy, then surgery first.")
	jt, err := reg.Task("o1judge")
	if err != nil {
		t.Fatal(err)
	}
	first := judge.Items(jt, items, st, []string{"G"})
	if len(first) != 2 || !strings.HasSuffix(first[1].ID, "/m1") {
		t.Fatalf("judge items %+v, want p1 and m1", first)
	}
	add("J", first[0], `{"explanation": "Recommends induction chemotherapy.", "criteria_met": true}`)
	add("J", first[1], `{"explanation": "Unclear whether surgery comes first.", "criteria_met": null}`)
	retry := judge.Retries(first, st, "J")
	if len(retry) != 1 || retry[0].ID != first[1].ID+"#retry1" {
		t.Fatalf("retries %+v, want only %s#retry1: a null criteria_met is no verdict", retry, first[1].ID)
	}
	add("J", retry[0], "```json\n{\"explanation\": \"Still unclear.\", \"criteria_met\": null}\n```")
	last := judge.Retries(retry, st, "J")
	if len(last) != 1 || last[0].ID != first[1].ID+"#retry2" {
		t.Fatalf("retries %+v, want %s#retry2", last, first[1].ID)
	}
	o1 := func(final string) score.O1Score {
		t.Helper()
		add("J", last[0], final)
		if more := judge.Retries(last, st, "J"); len(more) != 0 {
			t.Fatalf("retried past the last rung: %+v", more)
		}
		res, err := score.ScoreRun(reg, "o1", raw, items, st, score.RunModels("G"), 1, score.Options{Seed: 1, Draws: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res.JournalProblems != nil {
			t.Fatalf("journal problems: %+v", res.JournalProblems)
		}
		if rub := res.Models[0].Rubric; len(rub) == 1 && rub[0].Judge == "J" {
			return rub[0].Score
		}
		t.Fatalf("rubric %+v, want judge J's", res.Models[0].Rubric)
		return score.O1Score{}
	}
	// A null at the last rung: the item has no valid judgment, so no score.
	got := o1(`{"explanation": "Unclear.", "criteria_met": null}`)
	if got.Valid != 0 || got.Score != nil || len(got.FellOut) != 1 ||
		got.FellOut[0].Reason != "no valid verdict after 3 attempt(s) (out_of_category)" {
		t.Errorf("a null criteria_met at the last rung: %+v, want the item out of V, no verdict after 3 attempts", got)
	}
	// A null explanation is no verdict either, although criteria_met is.
	if got := o1(`{"explanation": null, "criteria_met": false}`); got.Valid != 0 || len(got.FellOut) != 1 {
		t.Errorf("a null explanation at the last rung: %+v, want the item out of V", got)
	}
	// The control: a valid "not met" there scores the item 10 of 10.
	if got := o1(`{"explanation": "Surgery is not first.", "criteria_met": false}`); got.Valid != 1 || got.Score == nil || got.Score.Percent != 100 {
		t.Errorf("a valid verdict at the last rung: %+v, want the item in V at 100", got)
	}
}

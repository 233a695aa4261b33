package tasktest

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/judge"
	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/send"
	"github.com/npcorch/npcorch/tasks/tasktest/toyfamily"
)

// TestAddingAFamily takes a benchmark family that lives in a package of
// its own (toyfamily: a closed question and a free-text question judged
// criterion by criterion) from a dataset to its score table, through the
// rooms every family shares and no other change: items built, prompts
// rendered from the family's own templates, the sim key written, the
// generator's requests answered by the simulated engine and journaled,
// the answers judged by a second simulated engine (tasks/judge), and the
// run scored from the journal with the family's Card (tasks/score). Under
// the oracle policy every answer is right and meets its criteria; under
// the constant policy the closed question scores its base rate and the
// free text meets no criterion.
func TestAddingAFamily(t *testing.T) {
	reg := toyfamily.Registry(configs.DefaultStructures())
	root := t.TempDir()
	raw, prep := smallDataset(t, root, []int{1, 0, 1, 1})
	raw.Consultations = []dataset.ConsultCase{{ID: "C1", Case: "A 50-year-old with a neck mass.", Questions: []dataset.ConsultQuestion{
		{ID: "Q1", Question: "What is the next step?", Criteria: []dataset.Criterion{
			{ID: "p1", Kind: dataset.KindPositive, Section: dataset.SectionCore, Weight: 5, Text: "Recommends a nasopharyngeal biopsy."},
			{ID: "p2", Kind: dataset.KindPositive, Section: dataset.SectionCore, Weight: 3, Text: "Recommends MRI of the nasopharynx and neck."},
			{ID: "m1", Kind: dataset.KindMajor, Text: "Recommends surgery before a diagnosis."}}},
		{ID: "Q2", Question: "Which staging manual applies?", Criteria: []dataset.Criterion{
			{ID: "p1", Kind: dataset.KindPositive, Section: dataset.SectionCore, Weight: 4, Text: "Names the AJCC/UICC eighth edition."}}},
	}}}
	items, problems, err := tasks.BuildItems(reg, raw, prep, nil)
	if err != nil || len(problems) != 1 || len(items) != 6 {
		t.Fatalf("items %+v, problems %v, %v; want 4 closed and 2 free-text items, and the patient without a slide named", items, problems, err)
	}
	prompts, err := tasks.LoadPrompts(toyfamily.Prompts(), "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	gen := configs.Model{Name: "toy-model", Engine: configs.Engine{Kind: configs.EngineSim},
		Tasks: map[string]configs.TaskSettings{toyfamily.ToyChoice: {MaxTokens: 64}, toyfamily.ToyConsult: {MaxTokens: 256}}}
	jm := configs.Model{Name: "toy-judge", Engine: configs.Engine{Kind: configs.EngineSim},
		Tasks: map[string]configs.TaskSettings{toyfamily.ToyJudge: {MaxTokens: 256}}}
	for _, c := range []struct {
		policy           string
		choice, freeText float64
	}{{"oracle", 100, 100}, {"constant", 25, 0}} {
		b := tasks.RequestBuilder{Model: gen, Media: configs.MediaBase64, Root: root}
		key, err := tasks.BuildSimKey(reg, b, prompts, tasks.ItemList(items).Items())
		if err != nil {
			t.Fatal(err)
		}
		keyFile := filepath.Join(t.TempDir(), "simkey.json")
		if err := key.Write(keyFile); err != nil {
			t.Fatal(err)
		}
		run := t.TempDir()
		judged := runFamily(t, reg, prompts, run, items,
			send.ModelRun{Model: gen, Builder: b, Items: tasks.ItemList(items)},
			startEngine(t, gen.Name, "--sim-key", keyFile, "--sim-policy", c.policy),
			send.ModelRun{Model: jm, Builder: tasks.RequestBuilder{Model: jm}},
			startEngine(t, jm.Name, "--sim-key", keyFile, "--sim-policy", "oracle"))
		// 3 criteria of Q1 and 1 of Q2, one judgment each.
		if judged.Answered != 4 || judged.NotRun != 0 {
			t.Errorf("%s: judge %+v, want 4 judgments", c.policy, judged)
		}
		st, err := journal.Read(run)
		if err != nil {
			t.Fatal(err)
		}
		res, err := score.ScoreRun(reg, "toy", raw, items, st, score.RunModels(gen.Name), 1, score.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		m := res.Models[0]
		if acc := m.Task(toyfamily.ToyChoice).Accuracy; acc.Percent != c.choice || acc.Denominator != 4 {
			t.Errorf("%s: closed question %v of %d, want %v of 4", c.policy, acc.Percent, acc.Denominator, c.choice)
		}
		if len(m.Rubric) != 1 || m.Rubric[0].Judge != jm.Name || m.Rubric[0].Score.Score == nil ||
			m.Rubric[0].Score.Score.Percent != c.freeText || m.Rubric[0].Score.Valid != 2 {
			t.Errorf("%s: free text %+v, want %v %% under %s over 2 items", c.policy, m.Rubric, c.freeText, jm.Name)
		}
		var md bytes.Buffer
		if err := res.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "Free text") || !strings.Contains(md.String(), "T1 Choice") {
			t.Errorf("%s: the score table has not the family's columns:\n%s", c.policy, md.String())
		}
	}
}

// runFamily sends the generator's items, then judges its answers, into
// the journal of run; it returns the judge's summary.
func runFamily(t *testing.T, reg *tasks.Registry, prompts *tasks.Prompts, run string, items []tasks.Item,
	gen send.ModelRun, genEP launcher.Endpoint, jm send.ModelRun, judgeEP launcher.Endpoint) send.Summary {
	t.Helper()
	j, err := journal.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	c := inference.NewClient(configs.ClientSettings{ConnectTimeout: 2 * time.Second, FirstTokenTimeout: 10 * time.Second,
		ChunkTimeout: 10 * time.Second, TotalTimeout: 20 * time.Second})
	defer c.Close()
	r := &send.Runner{Client: c, Journal: j, Prompts: prompts, Tasks: reg, Retries: 1, Backoff: time.Millisecond}
	ctx := context.Background()
	gen.Pool, gen.Repeats = inference.NewPool([]launcher.Endpoint{genEP}, 2), 1
	if s, err := r.Run(ctx, gen); err != nil || s.Answered != len(items) {
		t.Fatalf("generator: %+v, %v; want all %d items answered", s, err, len(items))
	}
	jt, err := reg.Task(toyfamily.ToyJudge)
	if err != nil {
		t.Fatal(err)
	}
	jm.Pool, jm.Repeats = inference.NewPool([]launcher.Endpoint{judgeEP}, 2), 1
	s, err := judge.Run(ctx, r, jm, judge.Judging{Task: jt, Items: items, Generators: []string{gen.Model.Name},
		Read: func() (*journal.State, error) { return journal.Read(run) }})
	if err != nil {
		t.Fatalf("judge: %+v, %v", s, err)
	}
	return s
}

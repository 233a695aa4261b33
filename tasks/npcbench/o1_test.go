package npcbench

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/simengine"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/judge"
	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/send"
)

// consultData is two cases, three questions, each with two weighted
// requirements, a major and a minor error criterion; the first question
// has a physician-labelled response.
func consultData() *dataset.Raw {
	crit := func(q string) []dataset.Criterion {
		return []dataset.Criterion{
			{ID: "p1", Kind: dataset.KindPositive, Section: dataset.SectionCore, Weight: 6, Text: "Recommends induction chemotherapy for " + q + "."},
			{ID: "p2", Kind: dataset.KindPositive, Section: dataset.SectionEvidence, Weight: 4, Text: "Cites the N stage for " + q + "."},
			{ID: "m1", Kind: dataset.KindMajor, Text: "Recommends surgery first for " + q + "."},
			{ID: "n1", Kind: dataset.KindMinor, Text: "Omits the dose for " + q + "."},
		}
	}
	audit := []dataset.AuditResponse{{ID: "A1", Response: "(p1) Recommends induction chemotherapy for Q1. (m1) Recommends surgery first for Q1.",
		Labels: []dataset.PhysicianLabel{{Criterion: "p1", Met: true}, {Criterion: "p2", Met: true}, {Criterion: "m1", Met: true}, {Criterion: "n1", Met: false}}}}
	return &dataset.Raw{Format: dataset.RawFormat, Name: "o1", Consultations: []dataset.ConsultCase{
		{ID: "C1", Case: "A 45-year-old man with T3N2M0 nasopharyngeal carcinoma.", Questions: []dataset.ConsultQuestion{
			{ID: "Q1", Question: "What treatment next?", Tags: []string{dataset.TagTx}, Criteria: crit("Q1"), Audit: audit},
			{ID: "Q2", Question: "What work-up?", Tags: []string{dataset.TagWorkup}, Criteria: crit("Q2")}}},
		{ID: "C2", Case: "A 72-year-old woman after chemoradiotherapy.", Questions: []dataset.ConsultQuestion{
			{ID: "Q3", Question: "How to manage mucositis?", Tags: []string{dataset.TagAE, dataset.TagElderly}, Criteria: crit("Q3")}}},
	}}
}

func simModel(name, task string) configs.Model {
	return configs.Model{Name: name, Engine: configs.Engine{Kind: configs.EngineSim},
		Tasks: map[string]configs.TaskSettings{task: {MaxTokens: 2048}}}
}

// serveSim runs the simulated engine in this process until the test ends.
func serveSim(t *testing.T, served string, args ...string) launcher.Endpoint {
	t.Helper()
	port := proctest.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- simengine.Main(ctx, append([]string{"serve", served, "--served-model-name", served, "--host", "127.0.0.1",
			"--port", strconv.Itoa(port), "--sim-workers", "0", "--disable-uvicorn-access-log"}, args...), io.Discard, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return launcher.Endpoint{Model: served, BaseURL: base + "/v1", MaxNumSeqs: 8}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the simulated engine's /health")
		}
	}
}

// TestO1GeneratedJudgedAndScored runs O1 end to end on the simulated
// engine: a generator writes free-text answers that meet or miss each
// criterion by its seeded policy; a judge with a known error rate
// judges every (answer, criterion), and the audit response; a garbage
// judge's unreadable verdicts climb the retry ladder to the JSON schema.
// The score and the calibration are derived by hand from the journal.
func TestO1GeneratedJudgedAndScored(t *testing.T) {
	st := configs.DefaultStructures()
	reg := Registry(st)
	raw := consultData()
	if ps := raw.Validate(t.TempDir(), st.IDs()); len(ps) != 0 {
		t.Fatalf("fixture: %v", ps)
	}
	items, problems, err := tasks.BuildItems(reg, raw, &dataset.Prepared{Format: dataset.PreparedFormat}, []string{O1})
	if err != nil || len(problems) != 0 || len(items) != 3 || items[2].ID != "o1/C2/Q3" {
		t.Fatalf("items %+v, problems %v, %v", items, problems, err)
	}
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	gen, judgeModel, strict := simModel("gen", O1), simModel("judge", O1Judge), simModel("strict", O1Judge)
	key, err := tasks.BuildSimKey(reg, tasks.RequestBuilder{Model: gen}, prompts, tasks.ItemList(items).Items())
	if err != nil {
		t.Fatal(err)
	}
	keyFile := t.TempDir() + "/simkey.json"
	if err := key.Write(keyFile); err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
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
	runModel := func(m configs.Model, ep launcher.Endpoint) send.ModelRun {
		return send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m}, Pool: inference.NewPool([]launcher.Endpoint{ep}, 4), Repeats: 1}
	}

	mr := runModel(gen, serveSim(t, "gen", "--sim-key", keyFile, "--sim-policy", "right=0.5", "--sim-seed", "4"))
	mr.Items = tasks.ItemList(items)
	if s, err := r.Run(ctx, mr); err != nil || s.Answered != 3 {
		t.Fatalf("generation: %+v, %v", s, err)
	}
	judgeTask, _ := reg.Task(O1Judge)
	read := func() (*journal.State, error) { return journal.Read(run) }
	jd := judge.Judging{Task: judgeTask, Items: items, Generators: []string{"gen"}, Read: read}
	// 3 answers and 1 audit response, 4 criteria each: 16 judgments.
	s, err := judge.Run(ctx, r, runModel(judgeModel, serveSim(t, "judge", "--sim-key", keyFile, "--sim-policy", "right=0.7", "--sim-seed", "2")), jd)
	if err != nil || s.Answered != 16 || s.Requests != 16 {
		t.Fatalf("judge: %+v, %v; want 16 judgments, none retried", s, err)
	}
	s, err = judge.Run(ctx, r, runModel(strict, serveSim(t, "strict", "--sim-key", keyFile, "--sim-policy", "garbage")), jd)
	if err != nil || s.Answered != 48 {
		t.Fatalf("garbage judge: %+v, %v; want 16 judgments at each of 3 rungs", s, err)
	}

	state, err := read()
	if err != nil {
		t.Fatal(err)
	}
	res, err := score.ScoreRun(reg, "o1", raw, items, state, score.RunModels("gen"), 1, score.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.JournalProblems != nil {
		t.Errorf("journal problems: %+v", res.JournalProblems)
	}
	want := handScores(t, state, prompts, items)
	if want["differ"] == 0 || want["strict"] == 0 || want["strict"] == 100 {
		t.Fatalf("the fixture is degenerate: %v (the right=0.7 judge must err somewhere, the answers must be partial)", want)
	}
	rub := res.Models[0].Rubric
	if len(rub) != 2 || rub[0].Judge != "judge" || rub[1].Judge != "strict" {
		t.Fatalf("rubric results %+v, want judge then strict", rub)
	}
	for i, name := range []string{"judge", "strict"} {
		got := rub[i].Score
		if got.Valid != 3 || math.Abs(got.Score.Percent-want[name]) > 1e-9 {
			t.Errorf("%s: O1 %.4f over %d valid items, want %.4f over 3 (derived from the journal)", name, got.Score.Percent, got.Valid, want[name])
		}
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Model | O1 Rubric | answered", "## O1 ConsultRubrics", "| gen | judge | ", "| gen | strict | ", "3 of 3 | none |",
		"## Judge calibration", "| strict | all | 4 | 75.0", "| Model | Judge | AE | elderly | Tx | workup |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("scores.md lacks %q:\n%s", want, md.String())
		}
	}
	if len(res.Judges) != 2 {
		t.Fatalf("calibration %+v, want both judges", res.Judges)
	}
	// The physicians credit p2, which the audit response does not say: a
	// judge that reads the response truly agrees on 3 of 4 labels.
	if cal := res.Judges[1].Calibration; cal.Labels != 4 || *cal.All.Po != 0.75 || cal.All.FN != 1 {
		t.Errorf("the garbage judge, constrained at the last rung, judges truly: agreement %v, %+v", *cal.All.Po, cal.All)
	}
	if cal := res.Judges[0].Calibration; cal.Labels != 4 || math.Abs(*cal.All.Po-want["agree"]) > 1e-9 {
		t.Errorf("judge agreement %v, want %v", *cal.All.Po, want["agree"])
	}
}

// handScores derives, from the journal alone, each judge's O1 score of
// "gen" (Eq. A7: 100·max(0, Σ weights met − 2·majors − minors)/10, mean
// over the items) and the right=0.7 judge's agreement with the audit's
// labels, reading each verdict as criteria_met in the raw JSON.
func handScores(t *testing.T, st *journal.State, prompts *tasks.Prompts, items []tasks.Item) map[string]float64 {
	t.Helper()
	met := map[string]bool{} // judge + "|" + judge item id (rung-less)
	for _, rec := range st.Records {
		if rec.Task != O1Judge {
			continue
		}
		id, rung, _ := strings.Cut(rec.Item, "#retry")
		if rec.Model == "strict" && rung != "2" {
			continue
		}
		met[rec.Model+"|"+id] = strings.Contains(rec.Answer.Content, `"criteria_met": true`)
	}
	out := map[string]float64{}
	for k, v := range met {
		if strings.HasPrefix(k, "judge|") && met["strict|"+strings.TrimPrefix(k, "judge|")] != v {
			out["differ"]++
		}
	}
	for _, jm := range []string{"judge", "strict"} {
		total := 0.0
		for _, it := range items {
			raw := 0.0
			for _, c := range it.Consult.Criteria {
				if !met[jm+"|"+judge.ItemID(O1Judge, &tasks.Judged{Generator: "gen", Item: it.ID, Criterion: c})] {
					continue
				}
				switch c.Kind {
				case dataset.KindPositive:
					raw += c.Weight
				case dataset.KindMajor:
					raw -= 2
				default:
					raw--
				}
			}
			total += 100 * max(0, raw) / 10
		}
		out[jm] = total / 3
	}
	agree := 0
	for _, l := range items[0].Consult.Audit[0].Labels {
		c, _ := items[0].Consult.Criteria, 0
		for _, cr := range c {
			if cr.ID == l.Criterion && met["judge|"+judge.ItemID(O1Judge, &tasks.Judged{Generator: judge.AuditGenerator, Audit: "A1", Item: items[0].ID, Criterion: cr})] == l.Met {
				agree++
			}
		}
	}
	out["agree"] = float64(agree) / 4
	return out
}

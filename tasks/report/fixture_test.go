package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/score"
)

// testRegistry is NPCBench's tasks, the benchmark the fixture runs.
func testRegistry() *tasks.Registry { return npcbench.Registry(configs.DefaultStructures()) }

// campaign is a small but complete NPCBench campaign: every Table 1 column
// has items, and two models answer them.
//
//	pathology  P1..P4 gold 1,1,1,0
//	sequence   P1: T1_Ax, T2_Ax, T1+C_Ax
//	t_groups   P1..P4 gold T1,T2,T3,T3
//	n_groups   P1..P4 gold N0,N1,N1,N2
//	card       P5 (T3: clivus and parapharyngeal space invaded), P6 (T1): 18 cards each
//	t_cards    P5, P6
//	carepath   P7 (T3, two care questions), P8 (T2, one scored and one excluded), P9 (T4, one)
type campaign struct {
	st    *configs.Structures
	raw   dataset.Raw
	items []tasks.Item
}

func newCampaign() *campaign {
	c := &campaign{st: configs.DefaultStructures(), raw: dataset.Raw{Format: dataset.RawFormat, Name: "fixture"}}
	add := func(it tasks.Item) { c.items = append(c.items, it) }
	path := []int{1, 1, 1, 0}
	ts := []string{"T1", "T2", "T3", "T3"}
	ns := []string{"N0", "N1", "N1", "N2"}
	for i := range 4 {
		id := fmt.Sprintf("P%d", i+1)
		c.raw.Patients = append(c.raw.Patients, dataset.Patient{ID: id, TStage: ts[i], NStage: ns[i],
			Cohorts: []string{dataset.CohortPathology, dataset.CohortTGroups, dataset.CohortNGroups}})
		add(tasks.Item{ID: "pathology/" + id, Task: npcbench.Pathology, Patient: id, Gold: tasks.Gold{Label: fmt.Sprint(path[i])}})
	}
	for _, seq := range []string{"T1_Ax", "T2_Ax", "T1+C_Ax"} {
		add(tasks.Item{ID: "sequence/P1/" + seq, Task: npcbench.Sequence, Patient: "P1", Gold: tasks.Gold{Label: seq}})
	}
	for i := range 4 {
		id := fmt.Sprintf("P%d", i+1)
		add(tasks.Item{ID: "t_groups/" + id, Task: npcbench.TGroups, Patient: id, Gold: tasks.Gold{Label: ts[i]}})
	}
	for i := range 4 {
		id := fmt.Sprintf("P%d", i+1)
		add(tasks.Item{ID: "n_groups/" + id, Task: npcbench.NGroups, Patient: id, Gold: tasks.Gold{Label: ns[i]}})
	}
	for _, pt := range []struct {
		id, t   string
		invaded []string
	}{{"P5", "T3", []string{"clivus", "parapharyngeal_space"}}, {"P6", "T1", nil}} {
		p := dataset.Patient{ID: pt.id, TStage: pt.t, Cohorts: []string{dataset.CohortCards}}
		for _, s := range c.st.IDs() {
			inv := 0
			if contains(pt.invaded, s) {
				inv = 1
			}
			p.Structures = append(p.Structures, dataset.Finding{Structure: s, Invasion: inv})
			add(tasks.Item{ID: "card/" + pt.id + "/" + s, Task: npcbench.Card, Patient: pt.id,
				Gold: tasks.Gold{Structure: s, Invasion: inv}})
		}
		c.raw.Patients = append(c.raw.Patients, p)
	}
	add(tasks.Item{ID: "t_cards/P5", Task: npcbench.TCards, Patient: "P5", Gold: tasks.Gold{Label: "T3"}})
	add(tasks.Item{ID: "t_cards/P6", Task: npcbench.TCards, Patient: "P6", Gold: tasks.Gold{Label: "T1"}})
	options := []dataset.Option{{Letter: "A", Text: "CCRT"}, {Letter: "B", Text: "IC + CCRT"}, {Letter: "C", Text: "RT alone"}, {Letter: "D", Text: "Observation"}}
	for _, ep := range []struct {
		id, t    string
		care     []string
		excluded []bool
	}{{"P7", "T3", []string{"A", "B"}, []bool{false, false}}, {"P8", "T2", []string{"A", "C"}, []bool{false, true}}, {"P9", "T4", []string{"A"}, []bool{false}}} {
		c.raw.Patients = append(c.raw.Patients, dataset.Patient{ID: ep.id, TStage: ep.t, Cohorts: []string{dataset.CohortCarePath}})
		add(tasks.Item{ID: "cp_pathology/" + ep.id, Task: npcbench.CPPathology, Patient: ep.id, Gold: tasks.Gold{Label: "1"}})
		add(tasks.Item{ID: "cp_mri/" + ep.id, Task: npcbench.CPMRI, Patient: ep.id, Gold: tasks.Gold{Label: ep.t}})
		for q, gold := range ep.care {
			qid := fmt.Sprintf("q%d", q+1)
			add(tasks.Item{ID: "cp_care/" + ep.id + "/" + qid, Task: npcbench.CPCare, Patient: ep.id, Gold: tasks.Gold{Label: gold},
				Care:     &dataset.CareQuestion{ID: qid, Question: "Next step?", Options: options, Answer: gold, Excluded: ep.excluded[q]},
				Excluded: ep.excluded[q]})
		}
	}
	return c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// staging is an A8/A12 answer: every structure 0 except invaded, and the T stage.
func (c *campaign) staging(t string, invaded ...string) string {
	inv := map[string]int{}
	for _, id := range c.st.IDs() {
		inv[id] = 0
	}
	for _, id := range invaded {
		inv[id] = 1
	}
	b, _ := json.Marshal(inv)
	return fmt.Sprintf(`{"structure_invasion":%s,"t_stage":%q}`, b, t)
}

func card(structure string, invasion int) string {
	return fmt.Sprintf(`{"structure_id":%q,"invasion":%d}`, structure, invasion)
}

// answers maps item id to the model's answer; notRun maps item id to the
// failures of a request that never got one.
type answers struct {
	content map[string]string
	notRun  map[string][]string
}

// alpha is a good but imperfect model; its scores are worked out by hand
// in the tests:
//
//	Path. 3/4 (P3 wrong)  Seq. 3/3  T-Stg. 4/6 (t_groups P4 and t_cards P6 wrong)
//	N-Stg. 3/4 (P3 wrong)  Struct. 34/36 (P6 atlas→axis, P6 clivus unparseable)
//	Care 3/4, All-care 2/3, Strict 1/3; n11=P7, n10=P8, n01=P9
func (c *campaign) alpha() answers {
	a := answers{content: map[string]string{}}
	for id, v := range map[string]string{"P1": "1", "P2": "1", "P3": "0", "P4": "0"} {
		a.content["pathology/"+id] = v
	}
	a.content["sequence/P1/T1_Ax"] = `\boxed{A}`
	a.content["sequence/P1/T2_Ax"] = "The plane is axial, fluid bright.\n\\boxed{B}"
	a.content["sequence/P1/T1+C_Ax"] = `\boxed{C}`
	for id, v := range map[string]string{"P1": "T1", "P2": "T2", "P3": "T3", "P4": "T4"} {
		a.content["t_groups/"+id] = c.staging(v)
	}
	for id, v := range map[string]string{"P1": "N0", "P2": "N1", "P3": "N2", "P4": "N2"} {
		a.content["n_groups/"+id] = fmt.Sprintf(`{"n_stage":%q,"evidence":"level II nodes"}`, v)
	}
	for _, p := range []string{"P5", "P6"} {
		for _, s := range c.st.IDs() {
			inv := 0
			if p == "P5" && (s == "clivus" || s == "parapharyngeal_space") {
				inv = 1
			}
			a.content["card/"+p+"/"+s] = card(s, inv)
		}
	}
	a.content["card/P6/atlas"] = card("axis", 0)
	a.content["card/P6/clivus"] = "The clivus looks normal."
	a.content["t_cards/P5"] = c.staging("T3", "clivus", "parapharyngeal_space")
	a.content["t_cards/P6"] = c.staging("T2")
	for _, p := range []string{"P7", "P8", "P9"} {
		a.content["cp_pathology/"+p] = "1"
	}
	a.content["cp_mri/P7"] = c.staging("T3")
	a.content["cp_mri/P8"] = c.staging("T3")
	a.content["cp_mri/P9"] = c.staging("T4")
	a.content["cp_care/P7/q1"] = "Answer: A"
	a.content["cp_care/P7/q2"] = "Answer: B"
	a.content["cp_care/P8/q1"] = "Answer: A"
	a.content["cp_care/P8/q2"] = "Answer: D"
	a.content["cp_care/P9/q1"] = "Answer: C"
	return a
}

// beta answers constants: pathology 1, T3, N1, care A; invasion always 0.
// One sequence request never got an answer, another is unparseable.
//
//	Path. 3/4  Seq. 1/2* (one not run)  T-Stg. 3/6  N-Stg. 2/4  Struct. 36/36
//	Care 3/4, All-care 2/3, Strict 0/3; n01=P7, n10=P8, P9
func (c *campaign) beta() answers {
	a := answers{content: map[string]string{}, notRun: map[string][]string{}}
	for _, it := range c.items {
		switch it.Task {
		case npcbench.Pathology, npcbench.CPPathology:
			a.content[it.ID] = "1"
		case npcbench.TGroups, npcbench.TCards, npcbench.CPMRI:
			a.content[it.ID] = c.staging("T3")
		case npcbench.NGroups:
			a.content[it.ID] = `{"n_stage":"N1"}`
		case npcbench.Card:
			a.content[it.ID] = card(it.Gold.Structure, 0)
		case npcbench.CPCare:
			a.content[it.ID] = "A"
		}
	}
	a.content["sequence/P1/T2_Ax"] = `\boxed{B}`
	a.content["sequence/P1/T1+C_Ax"] = "It looks like a T2 image."
	a.notRun["sequence/P1/T1_Ax"] = []string{"connect: dial tcp 127.0.0.1:8001: connection refused", "first_token_timeout: no chunk in 300s"}
	return a
}

// records turns answers into journal records with made-up but regular
// usage and timing: the k-th item of a task has TTFT 100·(k+1) ms, E2E
// 1000·(k+1) + 10·len(item id) ms, TPOT 20 ms, 1000 prompt tokens of which
// 200 cached, 50 completion tokens.
func (c *campaign) records(model string, a answers, o runOptions) []journal.Record {
	var out []journal.Record
	k := map[string]int{}
	for _, it := range c.items {
		rec := journal.Record{Key: model + "|" + it.ID + "|0", Item: it.ID, Task: it.Task, Patient: it.Patient, Model: model, Images: 1}
		if f, ok := a.notRun[it.ID]; ok {
			rec.Status, rec.Attempts, rec.Failures = journal.StatusNotRun, len(f), f
			out = append(out, rec)
			continue
		}
		content, ok := a.content[it.ID]
		if !ok {
			continue
		}
		n := k[it.Task]
		k[it.Task]++
		rec.Status, rec.Attempts = journal.StatusAnswered, 1
		rec.Answer = &inference.Answer{Content: content, FinishReason: "stop",
			Usage: inference.Usage{PromptTokens: 1000, CompletionTokens: 50, CachedTokens: cachedOf(o, 200)},
			Timing: inference.Timing{TTFTms: float64(100 * (n + 1)), E2Ems: float64(1000*(n+1) + 10*len(it.ID)), TPOTms: 20, Chunks: 50,
				Started: fmt.Sprintf("2026-01-01T00:00:%02dZ", n)}}
		out = append(out, rec)
	}
	return out
}

// runOptions shape a fixture run directory.
type runOptions struct {
	gpu bool // write gpu/samples.jsonl and gpu/spans.json
	// alpha overrides some of alpha's answers (a second run that differs).
	alpha map[string]string
	// extraModels adds models m01, m02, ... answering like alpha and beta
	// in turn, for benchmarks at the paper's scale of models.
	extraModels int
	// noCachedTokens: the engine reported no cached tokens (a vLLM
	// started without --enable-prompt-tokens-details).
	noCachedTokens bool
}

// t0 is when the fixture's GPU sampler started.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// writeRun writes a scored run directory: the journal, scores.json (by
// score.ScoreRun and score.WriteScoreFiles) and, optionally, GPU samples
// and spans.
func writeRun(t testing.TB, dir string, o runOptions) {
	t.Helper()
	c := newCampaign()
	j, err := journal.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := c.alpha()
	for id, v := range o.alpha {
		a.content[id] = v
	}
	models := []string{"alpha", "beta"}
	recs := append(c.records("alpha", a, o), c.records("beta", c.beta(), o)...)
	for i := range o.extraModels {
		m := fmt.Sprintf("m%02d", i+1)
		models = append(models, m)
		if i%2 == 0 {
			recs = append(recs, c.records(m, a, o)...)
		} else {
			recs = append(recs, c.records(m, c.beta(), o)...)
		}
	}
	for _, rec := range recs {
		if err := j.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	state, err := journal.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := score.ScoreRun(testRegistry(), "fixture", &c.raw, c.items, state, score.RunModels(models...), 1, score.Options{Seed: 7, Draws: 200})
	if err != nil {
		t.Fatal(err)
	}
	if err := score.WriteScoreFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	if o.gpu {
		writeGPU(t, dir)
	}
}

// writeGPU writes 20 one-second ticks of GPUs 0 and 1, each using 100 J per
// tick at 50 % utilization, and one span: alpha on GPUs 0 and 1 for the
// first 10 s. alpha's hand-worked cost: 2 GPUs × 10 s = 20 GPU-seconds;
// ticks 1..10 × 2 GPUs × 100 J = 2000 J = 0.5556 Wh. beta has no span.
func writeGPU(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "gpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	total := uint64(80 << 30)
	for i := range 21 {
		s := gpu.Sample{Time: t0.Add(time.Duration(i) * time.Second)}
		for g := range 2 {
			used := uint64(40<<30) + uint64(i)<<20
			gs := gpu.GPUSample{DeviceSample: gpu.DeviceSample{Index: g, GPUUtilPercent: gpu.Ptr(50.0),
				MemUsedBytes: gpu.Ptr(used), MemTotalBytes: gpu.Ptr(total), PowerWatts: gpu.Ptr(100.0)}}
			if i > 0 {
				gs.EnergyJoules = gpu.Ptr(100.0)
			}
			s.GPUs = append(s.GPUs, gs)
		}
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, SamplesFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spans, err := json.Marshal([]gpu.Span{{Model: "alpha", Replica: "0", GPUs: []int{0, 1}, Start: t0, End: t0.Add(10 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SpansFile), spans, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cachedOf is n cached tokens, or none reported when o says so.
func cachedOf(o runOptions, n int) *int {
	if o.noCachedTokens {
		return nil
	}
	return &n
}

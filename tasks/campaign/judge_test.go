package campaign

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
	"github.com/npcorch/npcorch/tasks/send"
)

const judgedCampaign = `
name: judged
node: fake:a800-sxm-8
output: run
seed: 11
dataset: {raw: %q, prepared: %q}
tasks: [o1]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, "right=0.5"]}
judges:
  - name: GPT-OSS-120B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, garbage]}
`

// TestCampaignJudgesO1: two generators write O1 answers, two judges judge
// them in the same campaign (one of them a generator too, served again as
// Lingshu-7B@judge, whose unreadable verdicts climb to the JSON schema);
// the scores follow from the answer key and the policies, and `npcorch
// score` recomputes them from the journal byte for byte.
func TestCampaignJudgesO1(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	data, prepDir := fixture(t)
	dir := t.TempDir()
	c, err := configs.ParseCampaign("judged.yaml", dir, []byte(fmt.Sprintf(judgedCampaign, data, prepDir)), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var log bytes.Buffer
	o, err := Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	if err != nil {
		t.Fatalf("campaign: %v\n%s", err, log.String())
	}
	raw, err := dataset.LoadRaw(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Consultations) == 0 {
		t.Fatal("the fixture has no consultations")
	}
	for _, m := range o.Results.Models {
		if len(m.Rubric) != 2 || m.Rubric[0].Judge != "GPT-OSS-120B" || m.Rubric[1].Judge != "Lingshu-7B@judge" {
			t.Fatalf("%s: rubric %+v, want both judges", m.Model, m.Rubric)
		}
		want := handO1(raw, 11, m.Model, map[string]float64{"Qwen3-VL-8B-Instruct": 1, "Lingshu-7B": 0.5}[m.Model])
		for _, jr := range m.Rubric {
			// The oracle judges truly; the garbage one answers no JSON
			// until its verdicts are constrained to the schema, where the
			// simulated engine gives the true verdict.
			if s := jr.Score; !s.Complete || math.Abs(s.Score.Percent-want) > 1e-9 {
				t.Errorf("%s under %s: O1 %v (complete %v), want %v from the answer key and policy", m.Model, jr.Judge, s.Score.Percent, s.Complete, want)
			}
		}
	}
	if len(o.Results.Judges) != 2 || o.Results.Judges[0].Calibration.Labels == 0 {
		t.Errorf("calibration %+v, want both judges against the audit labels", o.Results.Judges)
	}
	st, err := journal.Read(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	rungs := map[string]int{}
	for _, rec := range st.Records {
		if rec.Task == "o1judge" && rec.Model == "Lingshu-7B@judge" {
			_, rung, _ := strings.Cut(rec.Item, "#retry")
			rungs[rung]++
		}
	}
	if rungs[""] == 0 || rungs[""] != rungs["1"] || rungs["1"] != rungs["2"] {
		t.Errorf("garbage judge's attempts by rung %v, want each judgment at all three", rungs)
	}
	// The live view (and npcorch status) lists the judges as models: each
	// judged, and ended with nothing left to judge.
	snap, err := live.ReadStatusFile(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	judged := map[string]live.Model{}
	for _, m := range snap.Models {
		judged[m.Model] = m
	}
	for _, j := range []string{"GPT-OSS-120B", "Lingshu-7B@judge"} {
		if m, ok := judged[j]; !ok || m.Answered == 0 || m.Requests == 0 || m.Remaining != 0 || m.State != live.ModelDone {
			t.Errorf("the live view's judge %s: %+v (listed %v), want it judged and done", j, m, ok)
		}
	}
	before, err := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ScoreDir(o.RunDir); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if err != nil || !bytes.Equal(before, after) || !bytes.Contains(after, []byte(`"rubric"`)) {
		t.Errorf("rescoring from the journal changed scores.json (%v)", err)
	}

	// Re-judging with one more judge is a new phase over the same
	// answers: nothing is generated or judged again but the new judge's.
	more := fmt.Sprintf(judgedCampaign, data, prepDir) + "  - name: Hulu-Med-4B\n    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}\n"
	c2, err := configs.ParseCampaign("judged.yaml", dir, []byte(more), nil)
	if err != nil {
		t.Fatal(err)
	}
	o2, err := Run(context.Background(), Options{Campaign: c2, Self: []string{exe}, Resume: true, Out: io.Discard, Log: io.Discard, Timing: testTiming()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range o2.Summaries {
		if s.Model != "Hulu-Med-4B" && (s.Answered != 0 || s.Skipped == 0) {
			t.Errorf("%s on resume: %+v, want everything already in the journal", s.Model, s)
		}
		if s.Model == "Hulu-Med-4B" && (s.Answered == 0 || s.Skipped != 0) {
			t.Errorf("the new judge: %+v, want every judgment new", s)
		}
	}
	for _, m := range o2.Results.Models {
		if len(m.Rubric) != 3 || m.Rubric[1].Judge != "Hulu-Med-4B" {
			t.Errorf("%s: rubric %+v, want three judges", m.Model, m.Rubric)
		}
	}
}

// handO1 is a generator's O1 score when its answers are judged truly: the
// simulated generator says a requirement's statement when
// decide(seed, model, "ITEM#CRITERION", p) is right, an error's when it is
// not; Eq. A7 over the items.
func handO1(raw *dataset.Raw, seed int64, model string, p float64) float64 {
	total, n := 0.0, 0
	for _, c := range raw.Consultations {
		for _, q := range c.Questions {
			item := "o1/" + c.ID + "/" + q.ID
			r := 0.0
			for _, cr := range q.Criteria {
				right, _ := decide(seed, model, item+"#"+cr.ID, p, 0)
				said := right == cr.Positive()
				switch {
				case !said:
				case cr.Positive():
					r += cr.Weight
				case cr.Kind == dataset.KindMajor:
					r -= 2
				default:
					r--
				}
			}
			total += 100 * max(0, r) / q.Points()
			n++
		}
	}
	return total / float64(n)
}

// TestDatasetWorkloadsCountTheJudges: counted in a prepared dataset, a
// judge's work is one request per criterion of every consultation, for
// each generator and each audited response; it waits for every generator.
func TestDatasetWorkloadsCountTheJudges(t *testing.T) {
	data, prepDir := fixture(t)
	c, err := configs.ParseCampaign("j.yaml", t.TempDir(), []byte(fmt.Sprintf(`
name: j
node: fake:a800-sxm-8
output: run
dataset: {raw: %q, prepared: %q}
tasks: [o1]
models: [{name: Lingshu-7B, engine: {kind: sim}}, GPT-5.1]
judges: [{name: GPT-OSS-120B, engine: {kind: sim}}]
`, data, prepDir)), nil)
	if err != nil {
		t.Fatal(err)
	}
	wls, _, err := DatasetWorkloads(c)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dataset.LoadRaw(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, cc := range raw.Consultations {
		for _, q := range cc.Questions {
			want += len(q.Criteria) * (2 + len(q.Audit))
		}
	}
	var judge *schedule.Workload
	for i := range wls {
		if wls[i].Model == "GPT-OSS-120B" {
			judge = &wls[i]
		}
	}
	if want == 0 || judge == nil || judge.Requests != want || judge.Task != "o1judge" || judge.OutputTokens != int64(want)*2048 {
		t.Errorf("judge workload %+v, want %d o1judge requests of 2,048 output tokens", judge, want)
	}
	if after := JudgeAfter(c); !reflect.DeepEqual(after, map[string][]string{"GPT-OSS-120B": {"Lingshu-7B", "GPT-5.1"}}) {
		t.Errorf("JudgeAfter = %v", after)
	}
}

// TestJudgePassesCountEachJudgmentOnce forces the order that made
// TestCampaignJudgesO1 flaky on a resumed run: the judge starts while a
// generator is still to end (one journalled answer already judged by an
// earlier run), judges what the journal holds, then passes again once the
// generator has ended, over the same answers and the new one. Each pass
// lists every judgment of the answers in the journal, as Runner.Judge
// does; the summary must still count each judgment once, and report as
// "already in the journal" only the one an earlier run made.
func TestJudgePassesCountEachJudgmentOnce(t *testing.T) {
	answers := []string{"a1", "a2", "a3"}  // journalled when the judge starts
	journal := map[string]bool{"a1": true} // the judge's own records
	left := make(chan int, 1)
	left <- 1 // one generator still to end
	passes := 0
	pass := func() (send.Summary, error) {
		passes++
		s := send.Summary{Requests: len(answers)}
		for _, a := range answers {
			if journal[a] {
				s.Skipped++
				continue
			}
			journal[a] = true
			s.Answered++
		}
		if passes == 1 { // the last generator ends during the first pass
			answers = append(answers, "b1")
			left <- 0
		}
		return s, nil
	}
	got, err := judgePasses(context.Background(), left, pass)
	if err != nil {
		t.Fatal(err)
	}
	want := send.Summary{Requests: 4, Skipped: 1, Answered: 3}
	if passes != 2 || got.Requests != want.Requests || got.Skipped != want.Skipped || got.Answered != want.Answered {
		t.Errorf("after %d passes: %+v, want %+v (4 judgments, one from an earlier run)", passes, got, want)
	}
}

package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/score"
)

// runCampaign runs the campaign src (its dataset the fixture's, prepared
// from prepDir) and returns its outcome, error and event log.
func runCampaign(t *testing.T, src, prepDir string, repeat int) (*Outcome, error, string) {
	t.Helper()
	data, _ := fixture(t)
	src = fmt.Sprintf("node: fake:h100-sxm-4\noutput: run\ndataset: {raw: %q, prepared: %q}\n", data, prepDir) +
		"client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}\n" + src
	c, err := configs.ParseCampaign("c.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var log bytes.Buffer
	o, err := Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming(), Repeat: repeat})
	return o, err, log.String()
}

func readRunFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunKeepsTheRequestsItCouldNotBuild: an image that changed after
// prep makes its item's request unbuildable. The run used to say so once
// on stderr and keep it nowhere: no journal record, "missing 1" in the
// score files with left_out empty, and an error pointing at "reasons
// above" that `npcorch status` printed with nothing above. The reason is
// now in events.log, scores.md and scores.json (left_out, with the model),
// `npcorch score` lists it again, and the error names it.
func TestRunKeepsTheRequestsItCouldNotBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real engine process")
	}
	_, prepDir := fixture(t)
	prep2 := filepath.Join(t.TempDir(), "prep")
	if err := os.CopyFS(prep2, os.DirFS(prepDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(prep2, "P02", "overview.png"), 100); err != nil {
		t.Fatal(err)
	}
	o, err, log := runCampaign(t, `
name: unsent
tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
`, prep2, 0)
	const reason = "has 100 bytes but the manifest says"
	if !errors.Is(err, ErrIncomplete) || strings.Contains(err.Error(), "reasons above") || !strings.Contains(err.Error(), "1 × item pathology/P02: image P02/overview.png "+reason) {
		t.Fatalf("run: %v; want it incomplete, naming the reason itself (status prints it alone)\n%s", err, log)
	}
	events := readRunFile(t, o.RunDir, "events.log")
	if !strings.Contains(events, "not sent: Lingshu-7B, pathology/P02: image P02/overview.png "+reason) {
		t.Errorf("events.log does not keep the reason:\n%s", events)
	}
	md := readRunFile(t, o.RunDir, "scores.md")
	if !strings.Contains(md, "**Not sent: 1 request(s) could not be built**") || !strings.Contains(md, "- Lingshu-7B, pathology/P02: image P02/overview.png "+reason) {
		t.Errorf("scores.md does not name the item not sent:\n%s", md)
	}
	var sj score.Results
	if err := json.Unmarshal([]byte(readRunFile(t, o.RunDir, "scores.json")), &sj); err != nil {
		t.Fatal(err)
	}
	if len(sj.LeftOut) != 1 || sj.LeftOut[0].Model != "Lingshu-7B" || sj.LeftOut[0].Item != "pathology/P02" || !strings.Contains(sj.LeftOut[0].Reason, reason) {
		t.Errorf("scores.json left_out = %+v, want pathology/P02 for Lingshu-7B and why", sj.LeftOut)
	}
	// `npcorch score` recomputes the same bytes from the run folder.
	if _, _, err := ScoreDir(o.RunDir); err != nil {
		t.Fatal(err)
	}
	if again := readRunFile(t, o.RunDir, "scores.md"); again != md {
		t.Errorf("score gives other bytes:\n%s\nwant\n%s", again, md)
	}
}

// TestAbandonedModelsDependentsSayWhy: a model no GPU can hold is
// abandoned; its care questions, whose prompts need its own pathology and
// MRI answers, used to be listed one line per answer with "which has not
// been answered yet; resume the run", which no resume can help. They now
// say the answer was not answered because no replica will serve the
// model, one line per task of the answer.
func TestAbandonedModelsDependentsSayWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real engine process")
	}
	_, prepDir := fixture(t)
	o, err, log := runCampaign(t, `
name: abandoned
tasks: [carepath]
models:
  - name: Huge
    params_b: 900
    engine: {kind: sim, replicas: 1}
`, prepDir, 0)
	if err == nil {
		t.Fatalf("run of an unplaceable model: no error\n%s", log)
	}
	if len(o.Summaries) != 1 {
		t.Fatalf("summaries %+v", o.Summaries)
	}
	s := o.Summaries[0]
	var dependents, lines int
	for r, n := range s.Reasons {
		if strings.Contains(r, "has not been answered yet") || strings.Contains(r, "resume the run") {
			t.Errorf("%d × %q: resuming cannot help an abandoned model", n, r)
		}
		if strings.HasPrefix(r, "its prompt needs the model's answer to a ") {
			lines++
			dependents += n
			if !strings.Contains(r, "which was not answered: no replica will serve this model: model Huge is not served: Huge needs at least") ||
				!strings.Contains(r, "larger than one node") {
				t.Errorf("reason %q does not say the model was abandoned, and why", r)
			}
		}
	}
	if dependents == 0 || lines > 2 {
		t.Errorf("%d dependents on %d lines, want them grouped by the task of the answer (cp_pathology, cp_mri): %v", dependents, lines, s.Reasons)
	}
}

// TestRunWithoutJudgesAndRepeatsSaysSo: O1 answered in a campaign with no
// judges used to leave no word in scores.md or scores.json; and with
// --repeat k, scores.md showed repeat 0 and said nothing of the others.
// The reliability measures are ClinicalBench's (/work/shared/notes/
// clinicare.md: "avg@k = mean accuracy over all n·k runs, with the SD of
// the k per-attempt accuracies; pass^k = (1/n)·Σ_i Π_r 1[ŷ_ir = y_i]
// (right every time); pass@k = right at least once"); NPCBench's paper
// reports one run per model, so scores.md keeps its table on repeat 0 and
// says so.
func TestRunWithoutJudgesAndRepeatsSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real engine process")
	}
	_, prepDir := fixture(t)
	o, err, log := runCampaign(t, `
name: nojudge
tasks: [pathology, o1]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
`, prepDir, 2)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	if !strings.Contains(log, "note: o1's answers will be journaled but not scored: campaign nojudge has no judges") {
		t.Errorf("the run does not say at its start that O1 will not be scored:\n%s", log)
	}
	var sj score.Results
	if err := json.Unmarshal([]byte(readRunFile(t, o.RunDir, "scores.json")), &sj); err != nil {
		t.Fatal(err)
	}
	o1 := 0
	for _, it := range o.Results.Models[0].Tasks {
		if it.Task == "o1" {
			t.Errorf("O1 has a score without a judge: %+v", it)
		}
	}
	if len(sj.Unjudged) == 1 && len(sj.Unjudged[0].Answered) == 1 {
		o1 = sj.Unjudged[0].Answered[0].Count
	}
	if o1 == 0 || o1%2 != 0 || sj.Unjudged[0].Task != "o1" || sj.Unjudged[0].JudgeTask != "o1judge" {
		t.Fatalf("scores.json unjudged = %+v, want o1's answers of both repeats counted", sj.Unjudged)
	}
	md := readRunFile(t, o.RunDir, "scores.md")
	for _, want := range []string{
		fmt.Sprintf("**ConsultRubrics (O1, A14): answered but not judged, so not scored** (answers: Lingshu-7B %d).", o1),
		"the campaign has no `judges:`. Add one",
		"## Repeats (k = 2)", "The table above scores repeat 0 only.",
		"| Model | Task | items | avg@k ± SD | pass^k | pass@k | agreement |",
		"| Lingshu-7B | pathology | 4 | 100.0 [",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("scores.md lacks %q:\n%s", want, md)
		}
	}
}

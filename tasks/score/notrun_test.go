package score_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/score"
)

// TestScoresSayWhyRequestsWereNotRun: a model abandoned mid-run (issue 25,
// item 14: an engine that crashed after every request) has its unanswered
// requests journaled not run with the reason; scores.json and scores.md
// give each model's not-run requests by reason, most frequent first, so
// the score files alone say why a row is provisional. A model with every
// request answered adds nothing (the demo's files stay as they were).
func TestScoresSayWhyRequestsWereNotRun(t *testing.T) {
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1"}, {ID: "P2"}, {ID: "P3"}, {ID: "P4"}}}
	var items []tasks.Item
	for _, p := range raw.Patients {
		items = append(items, tasks.Item{ID: "pathology/" + p.ID, Task: npcbench.Pathology, Patient: p.ID, Gold: tasks.Gold{Label: "1"}})
	}
	abandoned := "model M is not served: its engines crashed 6 times after they were ready (replicas r0), more than the 5 restarts a model gets (launch.max_model_restarts); last: engine exited"
	notRun := func(key, item string, failures ...string) journal.Record {
		return journal.Record{Key: key, Model: "M", Item: item, Task: "pathology", Patient: strings.TrimPrefix(item, "pathology/"),
			Status: journal.StatusNotRun, Failures: failures}
	}
	j := &journal.State{Records: map[string]journal.Record{}}
	for _, r := range []journal.Record{
		answered("M", "pathology/P1", "pathology", "P1", 0, "1"),
		notRun("a", "pathology/P2", "HTTP 503 from 10.0.0.7:23001", abandoned),
		notRun("b", "pathology/P3", abandoned),
		notRun("c", "pathology/P4", "HTTP 503 from 10.0.0.7:23001"),
		answered("N", "pathology/P1", "pathology", "P1", 0, "1"),
		answered("N", "pathology/P2", "pathology", "P2", 0, "1"),
		answered("N", "pathology/P3", "pathology", "P3", 0, "0"),
		answered("N", "pathology/P4", "pathology", "P4", 0, "1"),
	} {
		j.Records[r.Key] = r
	}
	res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M", "N"), 1, score.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []score.ReasonCount{{Reason: abandoned, Count: 2}, {Reason: "HTTP 503 from HOST:PORT", Count: 1}}
	if got := res.Models[0].NotRunReasons; !reflect.DeepEqual(got, want) {
		t.Errorf("M's not-run reasons %+v, want %+v", got, want)
	}
	if got := res.Models[1].NotRunReasons; got != nil {
		t.Errorf("N answered everything, yet has not-run reasons %+v", got)
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"**Not run: 3 request(s) have no answer**", "- M, 2 × " + abandoned + "\n", "- M, 1 × HTTP 503 from HOST:PORT\n"} {
		if !strings.Contains(md.String(), line) {
			t.Errorf("scores.md lacks %q:\n%s", line, md.String())
		}
	}
	js, err := json.Marshal(res.Models[1])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(js, []byte("not_run_reasons")) {
		t.Errorf("scores.json of a model with every request answered names not_run_reasons: %s", js)
	}

	// Every request answered: no "Not run" section at all.
	for _, k := range []string{"a", "b", "c"} {
		delete(j.Records, k)
	}
	for _, p := range []string{"P2", "P3", "P4"} {
		r := answered("M", "pathology/"+p, "pathology", p, 0, "1")
		j.Records[r.Key] = r
	}
	res, err = score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M", "N"), 1, score.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	md.Reset()
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Not run") {
		t.Errorf("a complete run's scores.md has a Not run section:\n%s", md.String())
	}
}

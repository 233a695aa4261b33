package score_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/score"
)

// choiceItem is a closed-choice item with k options (A, B, …) and its gold.
func choiceItem(task, id, patient, gold string, k int) tasks.Item {
	q := &tasks.Question{Text: "Which?"}
	for i := range k {
		q.Options = append(q.Options, dataset.Option{Letter: string(rune('A' + i)), Text: "option"})
	}
	return tasks.Item{ID: task + "/" + id, Task: task, Patient: patient, Gold: tasks.Gold{Label: gold}, Question: q}
}

// baselineRun is a run of L1, L3 pathology and L5 in which model "gaps"
// left items not run (two of L1, two of pathology, P3's second L5 turn)
// and model "full" answered every one.
func baselineRun() (*dataset.Raw, []tasks.Item, *journal.State) {
	raw := &dataset.Raw{}
	var items []tasks.Item
	// L1: golds A B B C D D; the first four have 4 options, the D's 2.
	for i, g := range []string{"A", "B", "B", "C", "D", "D"} {
		k := 4
		if g == "D" {
			k = 2
		}
		items = append(items, choiceItem(npcbench.GMem, fmt.Sprint("Q", i+1), fmt.Sprint("Q", i+1), g, k))
	}
	// L3 pathology: golds 1 0 0 1 1.
	for i, g := range []string{"1", "0", "0", "1", "1"} {
		p := fmt.Sprint("P", i+1)
		raw.Patients = append(raw.Patients, dataset.Patient{ID: p})
		items = append(items, tasks.Item{ID: "pathology/" + p, Task: npcbench.Pathology, Patient: p, Gold: tasks.Gold{Label: g}})
	}
	// L5: three patients of two 3-option turns: P1 A A, P2 A B, P3 B C.
	for p, golds := range map[string][]string{"T1": {"A", "A"}, "T2": {"A", "B"}, "T3": {"B", "C"}} {
		for turn, g := range golds {
			items = append(items, choiceItem(npcbench.LRev, fmt.Sprint(p, "/", turn), p, g, 3))
		}
	}
	j := &journal.State{Records: map[string]journal.Record{}}
	for _, it := range items {
		j.Records["full"+it.ID] = answered("full", it.ID, it.Task, it.Patient, 0, "A")
		switch it.ID {
		case "g_mem/Q5", "pathology/P4", npcbench.LRev + "/T3/1":
			// Not run: an infrastructure failure.
			j.Records["gaps"+it.ID] = journal.Record{Key: "gaps" + it.ID, Model: "gaps", Item: it.ID, Task: it.Task, Patient: it.Patient, Status: journal.StatusNotRun}
		case "g_mem/Q6", "pathology/P5":
			// Never attempted.
		default:
			j.Records["gaps"+it.ID] = answered("gaps", it.ID, it.Task, it.Patient, 0, "A")
		}
	}
	return raw, items, j
}

// TestBaselinesAreTheCohorts: the paper gives a baseline as a property of
// the cohort ("L3 pathology majority 56.5 %: 39 NPC-positive of 69
// overview cases"), so the baseline rows are computed over the cohort's
// items, answered or not, the same for every model, whatever the model
// listed first left not run. Derived by hand from the cohort:
//
//	L1 golds A B B C D D: majority B (the tie with D goes to the first), 2/6 = 33.3;
//	   random (4 × 1/4 + 2 × 1/2)/6 = 33.3.
//	Pathology golds 1 0 0 1 1: majority 1, 3/5 = 60.0.
//	L5 golds A A | A B | B C: majority A, 3/6 = 50.0 per turn; all-turn: only
//	   T1's turns are all A, 1/3 = 33.3; random 1/3 per turn = 33.3, all
//	   turns (1/3)² per patient = 11.1.
//
// Over the first model's answered items alone (the old rows) they were
// L1 B 2/4 = 50.0 and random 25.0, pathology 0 at 2/3 = 66.7, L5 A 3/5 =
// 60.0, random all-turn (1/9 + 1/9 + 1/3)/3 = 18.5 — and another model
// listed first gave other numbers.
func TestBaselinesAreTheCohorts(t *testing.T) {
	raw, items, j := baselineRun()
	const (
		majority = "| majority baseline (this cohort) | 33.3 (B) | 60.0 (1) | 50.0 (A) | 33.3 (A) | | | |\n"
		random   = "| random baseline (this cohort) | 33.3 |  | 33.3 | 11.1 | | | |\n"
	)
	for _, order := range [][]string{{"gaps", "full"}, {"full", "gaps"}} {
		res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels(order...), 1, score.Options{Seed: 1, Draws: -1})
		if err != nil {
			t.Fatal(err)
		}
		var md bytes.Buffer
		if err := res.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "| Model | L1 G-Mem. | L3 Path. | L5 Turn | L5 All-turn |") {
			t.Fatalf("models %v: unexpected columns:\n%s", order, md.String())
		}
		for _, row := range []string{majority, random} {
			if !strings.Contains(md.String(), row) {
				t.Errorf("models %v: scores.md lacks the cohort's row\n%swithin\n%s", order, row, md.String())
			}
		}
		// Every model carries the same baselines.
		for _, m := range res.Models {
			gmem, path, lrev := m.Task(npcbench.GMem), m.Task(npcbench.Pathology), m.Task(npcbench.LRev)
			if c := gmem.Chance; c.Majority.Class != "B" || !near(c.Majority.Accuracy, 100.0/3) || !near(c.Random.Accuracy, 100.0/3) {
				t.Errorf("%s: L1 baselines %+v", m.Model, c)
			}
			if b := path.Majority; b.Class != "1" || b.Count != 3 || b.Total != 5 {
				t.Errorf("%s: pathology majority %+v, want 1, 3 of 5", m.Model, b)
			}
			if c := lrev.Chance; c.Majority.Class != "A" || !near(c.Majority.Accuracy, 50) || !near(*c.Majority.AllCorrect, 100.0/3) ||
				!near(c.Random.Accuracy, 100.0/3) || !near(*c.Random.AllCorrect, 100.0/9) {
				t.Errorf("%s: L5 baselines %+v / %+v", m.Model, c.Majority, c.Random)
			}
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

package score_test

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/score"
)

func cardAnswer(structure string, invasion int) string {
	return fmt.Sprintf(`{"structure_id": %q, "invasion": %d}`, structure, invasion)
}

// TestRepeatsTableHasTheStructureCards: with --repeat k the journal holds
// every repeat of every card, and the repeats table gives the cards'
// avg@k ± SD, pass^k, pass@k and agreement for every model, as for any
// task (CliniCARE-Bench §5.6: "computed over the n cases gradeable in
// every attempt"; pass^k "answered correctly on every attempt"; pass@k "on
// at least one attempt"; agreement "all k attempts return the same
// verdict, correct or not"). A card is graded as the anatomical panel
// scores it: on its structure (left/right collapsed, Table 1's Struct.),
// and on structure and invasion together. Model M, k = 3, by hand:
//
//	card                      gold            repeats                           struct ✓ agree | joint ✓ agree
//	P1 clivus                 clivus/1        clivus/1 ×3                       3  yes          | 3  yes
//	P1 oropharynx             oropharynx/0    oropharynx/0, /1, /0              3  yes          | 2  no
//	P2 sphenoid_sinus         sphenoid/0      basisphenoid/0 ×3                 0  yes (wrong)  | 0  yes (wrong)
//	P2 nasal_passage          nasal/1         "nasal cavity"/1, unparseable, /1 2  no           | 2  no
//	P2 parapharyngeal (left)  para/1          right, not run, right             dropped
//
// Structure: avg@3 8/12 = 66.7, per repeat 75, 50, 75 (SD 14.4), pass^3
// 2/4 = 50.0, pass@3 3/4 = 75.0, agreement 3/4 = 75.0. Structure and
// invasion: avg@3 7/12 = 58.3, per repeat 75, 25, 75 (SD 28.9), pass^3
// 1/4 = 25.0, pass@3 3/4 = 75.0, agreement 2/4 = 50.0. Model N answers
// every card right every time: 100 throughout over 5 cards.
func TestRepeatsTableHasTheStructureCards(t *testing.T) {
	type card struct {
		patient, structure, side string
		invasion                 int
		m                        []string // M's answers per repeat; "-" not run
	}
	cards := []card{
		{"P1", "clivus", "", 1, []string{cardAnswer("clivus", 1), cardAnswer("clivus", 1), cardAnswer("clivus", 1)}},
		{"P1", "oropharynx", "", 0, []string{cardAnswer("oropharynx", 0), cardAnswer("oropharynx", 1), cardAnswer("oropharynx", 0)}},
		{"P2", "sphenoid_sinus", "", 0, []string{cardAnswer("basisphenoid", 0), cardAnswer("basisphenoid", 0), cardAnswer("basisphenoid", 0)}},
		{"P2", "nasal_passage", "", 1, []string{cardAnswer("nasal cavity", 1), "The yellow box marks the nasal cavity.", cardAnswer("nasal_passage", 1)}},
		{"P2", "parapharyngeal_space", "left", 1, []string{cardAnswer("parapharyngeal_space", 1), "-", cardAnswer("parapharyngeal_space", 1)}},
	}
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1", TStage: "T3"}, {ID: "P2", TStage: "T3"}}}
	var items []tasks.Item
	j := &journal.State{Records: map[string]journal.Record{}}
	for _, c := range cards {
		p := &raw.Patients[0]
		if c.patient == "P2" {
			p = &raw.Patients[1]
		}
		p.Structures = append(p.Structures, dataset.Finding{Structure: c.structure, Side: c.side, Invasion: c.invasion})
		id := strings.TrimSuffix("card/"+c.patient+"/"+c.structure+"/"+c.side, "/")
		items = append(items, tasks.Item{ID: id, Task: npcbench.Card, Patient: c.patient,
			Gold: tasks.Gold{Structure: c.structure, Side: c.side, Invasion: c.invasion}})
		for rep, answer := range c.m {
			right := answered("N", id, npcbench.Card, c.patient, rep, cardAnswer(c.structure, c.invasion))
			j.Records[right.Key] = right
			if answer == "-" {
				k := fmt.Sprint("M", id, rep)
				j.Records[k] = journal.Record{Key: k, Model: "M", Item: id, Task: npcbench.Card, Patient: c.patient, Repeat: rep, Status: journal.StatusNotRun}
				continue
			}
			r := answered("M", id, npcbench.Card, c.patient, rep, answer)
			j.Records[r.Key] = r
		}
	}
	res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M", "N"), 3, score.Options{Seed: 1, Draws: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.JournalProblems != nil {
		t.Fatalf("journal problems: %+v", res.JournalProblems)
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| M | card (structure) | 4 (1 dropped: a repeat not run) | 66.7* ± 14.4 | 50.0* | 75.0* | 75.0* |\n",
		"| M | card (structure and invasion) | 4 (1 dropped: a repeat not run) | 58.3* ± 28.9 | 25.0* | 75.0* | 50.0* |\n",
		"| N | card (structure) | 5 | 100.0 ± 0.0 | 100.0 | 100.0 | 100.0 |\n",
		"| N | card (structure and invasion) | 5 | 100.0 ± 0.0 | 100.0 | 100.0 | 100.0 |\n",
	} {
		if !strings.Contains(md.String(), row) {
			t.Errorf("the repeats table lacks\n%swithin\n%s", row, md.String())
		}
	}
	rel := res.Models[0].Reliability
	if len(rel) != 2 || rel[0].Task != npcbench.Card || rel[0].Field != npcbench.CardStructure || rel[1].Field != npcbench.CardJoint {
		t.Fatalf("M's reliability %+v, want the card's structure, then structure and invasion", rel)
	}
	for i, want := range [][]float64{{75, 50, 75}, {75, 25, 75}} {
		got := rel[i].Reliability.PerAttempt
		if len(got) != 3 || math.Abs(got[0]-want[0]) > 1e-9 || math.Abs(got[1]-want[1]) > 1e-9 || math.Abs(got[2]-want[2]) > 1e-9 {
			t.Errorf("%s: per-repeat accuracy %v, want %v", rel[i].Name(), got, want)
		}
	}
	// Repeat 0 alone is Table 1's Struct.: 4 of the 5 cards (the dropped
	// card's repeat 0 counts there).
	if s := res.Models[0].Evidence.Structure; s.Numerator != 4 || s.Denominator != 5 {
		t.Errorf("Struct. %v/%d, want 4/5", s.Numerator, s.Denominator)
	}
}

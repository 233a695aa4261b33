package dataset

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextSectionsReportEachProblemByItemAndField: every wrong option,
// answer, grouping key, date or checkpoint of the L1, L2, L4 and L5
// sections is a problem naming the file, the item and the field, and the
// well-formed items load with it.
func TestTextSectionsReportEachProblemByItemAndField(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[],
 "guideline":[
  {"id":"G1","source":"CSCO","question":"q","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"}],"answer":["A"]},
  {"id":"G1","source":"ESMO","question":"q","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"}],"answer":["C"]},
  {"id":"G/3","source":"both","question":"","options":[{"letter":"A","text":"a"}],"answer":["A"],"tags":["x","x"]}
 ],
 "application":[
  {"id":"A1","group":"recurence","context":"v","question":"q","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"},{"letter":"C","text":"c"}],"answer":["A","C"]},
  {"id":"A2","group":"recurrence","context":" ","question":"q","options":[{"letter":"A","text":"a"},{"letter":"a","text":"b"}],"answer":["A"],"multiple":true}
 ],
 "planning":[
  {"id":"C1","patient":"","category":"progression","context":"c","question":"q","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"}],"answer":["B","B"],"multiple":true}
 ],
 "longitudinal":[
  {"patient":"L1","records":[{"day":5,"section":"S","kind":"K","text":"t"},{"day":3,"section":"S","kind":"","text":"t"}],
   "checkpoints":[{"id":"c1","day":9,"category":"follow_up","current":"now","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"}],"answer":["A","B"],"multiple":true},
                  {"id":"c2","day":9,"category":"later","current":"","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"}],"answer":["B"]}]},
  {"patient":"L1","records":[],"checkpoints":[]}
 ]}`)
	_, err := LoadRaw(dir, nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want problems", err)
	}
	want := []string{
		`guideline[1] (G1).id: duplicate id "G1"`,
		`guideline[1] (G1).answer: "C" is not one of its options A, B`,
		`guideline[1] (G1).source: "ESMO" is not one of CSCO, NCCN, both`,
		`guideline[2] (G/3).id: id "G/3" holds a "/"`,
		`guideline[2] (G/3).question: empty`,
		`guideline[2] (G/3).options: 1 option(s)`,
		`guideline[2] (G/3).tags: tag "x" is given twice`,
		`application[0] (A1).answer: 2 letters A, C for a single-choice question; set multiple: true`,
		`application[0] (A1).group: "recurence" is not one of initial_management, recurrence, metastatic_systemic, toxicity_contraindication`,
		`application[1] (A2).options: option 1's letter "a" is not one capital letter`,
		`application[1] (A2).context: empty`,
		`planning[0] (C1).answer: B is given twice`,
		`planning[0] (C1).patient: empty id`,
		`longitudinal[0] (L1).records[1].day: day 3 comes before the previous record's day 5`,
		`longitudinal[0] (L1).records[1].kind: empty`,
		`longitudinal[0] (L1).checkpoints[0] (c1).multiple: L5 checkpoints are single choice`,
		`longitudinal[0] (L1).checkpoints[1] (c2).day: day 9 is not after the previous checkpoint's day 9`,
		`longitudinal[0] (L1).checkpoints[1] (c2).category: "later" is not one of`,
		`longitudinal[0] (L1).checkpoints[1] (c2).current: empty`,
		`longitudinal[1] (L1).patient: duplicate trajectory "L1"`,
		`longitudinal[1] (L1).checkpoints: the trajectory has no checkpoint`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing problem %q", w)
		}
	}
	if len(ps) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
	for _, p := range ps {
		if p.File != filepath.Join(dir, "dataset.json") {
			t.Errorf("problem %v does not name the file", p)
		}
	}
}

func TestControlCohortNeedsCarePathPatientsWithControlQuestions(t *testing.T) {
	dir := t.TempDir()
	q := `{"id":"q","checkpoint":"c","question":"?","options":[{"letter":"A","text":"a"}],"answer":"A"}`
	writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[
 {"id":"C1","cohorts":["carepath","carepath_control"],"episode":{"context":[],"questions":[`+q+`],"control_questions":[`+q+`]}},
 {"id":"C2","cohorts":["carepath_control"],"episode":{"context":[],"questions":[`+q+`],"control_questions":[`+q+`]}},
 {"id":"C3","cohorts":["carepath","carepath_control"],"episode":{"context":[],"questions":[`+q+`]}},
 {"id":"C4","cohorts":["carepath"],"episode":{"context":[],"questions":[`+q+`],"control_questions":[`+q+`,`+q+`]}}
]}`)
	_, err := LoadRaw(dir, nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want problems", err)
	}
	want := []string{
		`patients[1] (C2).cohorts: carepath_control patients must be carepath patients too`,
		`patients[2] (C3).episode.control_questions: the carepath_control patient has no control questions`,
		`patients[3] (C4): duplicate control question id "q"`,
		`patients[3] (C4).cohorts: the patient has control questions but is not in cohort carepath_control`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing problem %q in\n%v", w, err)
		}
	}
	if len(ps) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
}

func TestChoiceGoldFollowsOptionOrder(t *testing.T) {
	c := Choice{Options: []Option{{"A", "a"}, {"B", "b"}, {"C", "c"}, {"D", "d"}}, Answer: []string{"D", "B"}, Multiple: true}
	if g := c.Gold(); g != "B,D" {
		t.Errorf("gold %q, want B,D", g)
	}
	if r := c.Check(); r != "" {
		t.Errorf("a valid multiple-select question: %s", r)
	}
	tr := Trajectory{Records: []HistoryRecord{{Day: 1}, {Day: 5}, {Day: 5}, {Day: 9}}}
	if n := len(tr.History(&Checkpoint{Day: 5})); n != 3 {
		t.Errorf("history up to day 5 has %d records, want 3 (those of that day included)", n)
	}
}

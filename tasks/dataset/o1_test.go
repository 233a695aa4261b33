package dataset

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsultationsValidate: every problem of the O1 part of a dataset is
// reported, each naming the file, the case, the question and the field.
func TestConsultationsValidate(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[],"consultations":[
 {"id":"K1","case":"A 50-year-old man.","questions":[
  {"id":"q1","question":"Next step?","tags":["AE","Tx","AE","pediatric"],"criteria":[
   {"id":"c1","kind":"positive","section":"core","weight":6,"text":"Recommends X."},
   {"id":"c1","kind":"positive","section":"thesis","weight":-1,"text":"Recommends Y."},
   {"id":"c3","kind":"major","weight":2,"text":"Recommends Z."},
   {"id":"c4","kind":"minor","section":"core","text":""},
   {"id":"c5","kind":"fatal","text":"Says W."}],
   "audit":[{"id":"r1","response":"Give X.","labels":[{"criterion":"c1","met":true},{"criterion":"c9","met":false},{"criterion":"c1","met":false}]},
            {"id":"r1","response":" ","labels":[]}]},
  {"id":"q1","question":"","criteria":[{"id":"e","kind":"minor","text":"Omits V."}]}]},
 {"id":"K1","case":"","questions":[]}
]}`)
	_, err := LoadRaw(dir, nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not a list of problems", err)
	}
	q := `consultations[0] (K1): questions[0] (q1)`
	want := []string{
		q + `: tags: tag "AE" is given twice`,
		q + `: tags: unknown tag "pediatric"; use AE, Dx, elderly, paediatric, Tx, workup`,
		q + `: criteria[1] (c1): id: duplicate criterion id "c1" in this question`,
		q + `: criteria[1] (c1): weight: -1 is not a number of points ≥ 0`,
		q + `: criteria[1] (c1): section: unknown section "thesis"; use core, evidence, conditional`,
		q + `: criteria[2] (c3): weight: a major error criterion has no weight (it deducts 2 point(s), Eq. A7); remove it`,
		q + `: criteria[3] (c4): text: the criterion text is empty`,
		q + `: criteria[3] (c4): section: only positive requirements have a section; remove it`,
		q + `: criteria[4] (c5): kind: unknown kind "fatal"; use positive, major or minor`,
		q + `: audit[0] (r1): labels: criterion "c9" is not one of the question's`,
		q + `: audit[0] (r1): labels: criterion "c1" is labelled twice`,
		q + `: audit[1] (r1): id: audited response id "r1" is used already (` + q + `: audit[0] (r1)); ids must be unique over the dataset`,
		q + `: audit[1] (r1): response: the audited response is empty`,
		q + `: audit[1] (r1): labels: the response has no physician label`,
		`consultations[0] (K1): questions[1] (q1): id: duplicate question id "q1" in this case`,
		`consultations[0] (K1): questions[1] (q1): question: the question text is empty`,
		`consultations[0] (K1): questions[1] (q1): criteria: the positive requirements' weights add up to 0; Eq. A7 divides by them (B_i, 10 points in the paper), so give at least one a positive weight`,
		`consultations[1] (K1): duplicate case id "K1"; ids must be unique`,
		`consultations[1] (K1): case: the case information is empty; the consultation prompt (A14) shows it`,
		`consultations[1] (K1): questions: the case has no question`,
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
		if p.File != filepath.Join(dir, RawName) {
			t.Errorf("problem %v does not name the file", p)
		}
	}
}

// TestConsultationsValid: a well-formed suite loads without a problem, and
// an item's available points are the sum of its positive weights (B_i).
func TestConsultationsValid(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[],"consultations":[
 {"id":"K1","case":"A 50-year-old man.","questions":[
  {"id":"q1","question":"Next step?","tags":["Tx"],"criteria":[
   {"id":"c1","kind":"positive","section":"core","weight":6.5,"text":"Recommends X."},
   {"id":"c2","kind":"positive","weight":3.5,"text":"Cites Y."},
   {"id":"c3","kind":"major","text":"Recommends Z."}],
   "audit":[{"id":"r1","generator":"M","response":"Give X.","labels":[{"criterion":"c1","met":true}]}]}]}]}`)
	raw, err := LoadRaw(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := raw.Consultations[0].Questions[0]
	if b := q.Points(); b != 10 {
		t.Errorf("B_i = %g, want 10", b)
	}
	if Deduction(KindMajor) != 2 || Deduction(KindMinor) != 1 || Deduction(KindPositive) != 0 {
		t.Error("deductions are not 2 (major), 1 (minor), 0")
	}
}

// FuzzConsultations: any consultations part gives a dataset or problems,
// never a panic; an accepted one has a positive B_i for every question.
func FuzzConsultations(f *testing.F) {
	f.Add([]byte(`[{"id":"K1","case":"c","questions":[{"id":"q","question":"?","criteria":[{"id":"a","kind":"positive","weight":10,"text":"t"}],"audit":[{"id":"r","response":"x","labels":[{"criterion":"a","met":true}]}]}]}]`))
	f.Add([]byte(`[{"id":"K/1","questions":[{"criteria":[{"kind":"major","weight":1e308}]}]}]`))
	f.Fuzz(func(t *testing.T, part []byte) {
		dir := t.TempDir()
		writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[],"consultations":`+string(part)+`}`)
		raw, err := LoadRaw(dir, nil)
		if err != nil {
			return
		}
		for _, c := range raw.Consultations {
			for _, q := range c.Questions {
				if b := q.Points(); !(b > 0) || math.IsInf(b, 0) {
					t.Fatalf("accepted question %s/%s with B_i = %g", c.ID, q.ID, q.Points())
				}
			}
		}
	})
}

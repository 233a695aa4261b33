package policy_test

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/clinicare"
	"github.com/npcorch/npcorch/tasks/clinicare/policy"
)

func corpus(t testing.TB) *policy.Corpus {
	t.Helper()
	c, err := policy.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCitationsResolveByRule quotes §5.4: "A citation resolves when that document is present in the corpus and the
// span is valid … Citations naming an absent document or an invalid span do not resolve".
func TestCitationsResolveByRule(t *testing.T) {
	c := corpus(t)
	d, _ := c.Get("aki-kdigo")
	n := len(d.Lines)
	text := "Baseline per [policy: aki-kdigo L20--L27] and [policy: aki-kdigo L3-L5]; also [policy: aki-kdigo L12]. " +
		"Bad: [policy: aki-kdigo L5--L4] [policy: aki-kdigo L1--L9999] [policy: no-such-doc L1--L2] [policy: aki-kdigo L0--L2]"
	got := c.Citations(text)
	want := []bool{true, true, true, false, false, false, false}
	if len(got) != len(want) {
		t.Fatalf("found %d citations, want %d: %+v", len(got), len(want), got)
	}
	for i, ct := range got {
		if ct.Resolves != want[i] {
			t.Errorf("%s resolves=%v, want %v (%s; document has %d lines)", ct.Raw, ct.Resolves, want[i], ct.Why, n)
		}
	}
}

// TestLinesAreStable: line numbers are the file's, so a cited span reads the same text every time.
func TestLinesAreStable(t *testing.T) {
	lines, err := corpus(t).Read("aki-kdigo", 1, 1)
	if err != nil || lines[0].Text != "# Acute Kidney Injury: Definition and Staging (local adoption of KDIGO 2012)" {
		t.Fatalf("line 1 of aki-kdigo: %+v %v", lines, err)
	}
	if _, err := corpus(t).Read("aki-kdigo", 5, 2); err == nil {
		t.Fatal("a reversed span must be refused")
	}
}

func TestSearchFindsTheGoverningLineAndTheDecoy(t *testing.T) {
	hits, _ := corpus(t).Search("0.3 mg/dL", 50)
	docs := map[string]bool{}
	for _, h := range hits {
		docs[h.Doc] = true
	}
	if !docs["aki-kdigo"] {
		t.Fatalf("search for the KDIGO threshold misses aki-kdigo: %+v", hits)
	}
	old, _ := corpus(t).Search("superseded", 50)
	if len(old) == 0 || old[0].Doc != "aki-kdigo-2009-superseded" {
		t.Fatalf("the outdated decoy is not findable: %+v", old)
	}
}

// TestEveryGoverningDocumentExists ties the scenario specs to the corpus, and checks the corpus carries decoys
// (documents no scenario governs by).
func TestEveryGoverningDocumentExists(t *testing.T) {
	specs, err := clinicare.LoadSpecs()
	if err != nil {
		t.Fatal(err)
	}
	c := corpus(t)
	governing := map[string]bool{}
	for _, s := range specs {
		for _, id := range s.GoverningDocuments {
			if _, ok := c.Get(id); !ok {
				t.Errorf("scenario %s names governing document %q, which the corpus lacks", s.ID, id)
			}
			governing[id] = true
		}
	}
	var decoys []string
	for _, d := range c.Documents() {
		if !governing[d.ID] {
			decoys = append(decoys, d.ID)
		}
	}
	if len(decoys) < 3 || !strings.Contains(strings.Join(decoys, " "), "superseded") {
		t.Fatalf("decoys %v: want an outdated version and near-topic documents", decoys)
	}
}

func FuzzCitations(f *testing.F) {
	c := corpus(f)
	for _, s := range []string{"[policy: aki-kdigo L1--L2]", "[policy: x L99999999999]", "[policy:  L1]", "[policy: a L3–L1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, ct := range c.Citations(s) {
			if ct.Resolves {
				if _, err := c.Read(ct.Doc, ct.From, ct.To); err != nil {
					t.Fatalf("%q resolves but does not read: %v", ct.Raw, err)
				}
			}
		}
	})
}

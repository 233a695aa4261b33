package score

import (
	"fmt"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// tCohort is a 400-patient T cohort (50/50/150/150) answered right for two
// patients in three.
func tCohort() []Unit {
	classes := TClasses()
	return cohort(classes, []int{50, 50, 150, 150}, func(g string, i int) string {
		if i%3 == 0 {
			return classes[(indexOf(classes, g)+1)%4]
		}
		return g
	})
}

func panel(s *configs.Structures, n int) []PanelPatient {
	var pts []PanelPatient
	for p := range n {
		f := panelFindings(s, "clivus", "parapharyngeal_space/left")
		cards := perfectCards(f)
		if p%2 == 0 {
			cards[p%len(cards)].Pred.Structure = answer("axis")
		}
		pts = append(pts, PanelPatient{Patient: fmt.Sprintf("p%03d", p), TStage: "T3", Findings: f, Cards: cards, Staging: a8(s, "T3", "clivus")})
	}
	return pts
}

func TestResultsAreBitIdenticalJSON(t *testing.T) {
	s := configs.DefaultStructures()
	for name, f := range map[string]func() (any, error){
		"classify": func() (any, error) { return Classify(tCohort(), TClasses(), Options{Seed: 8}) },
		"carepath": func() (any, error) { return CarePath(paperCohort(195, 23), Options{Seed: 8}) },
		"evidence": func() (any, error) { return Evidence(panel(s, 20), s, Options{Seed: 8}) },
	} {
		a, err := f()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := f()
		if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
			t.Errorf("%s: two runs gave different JSON", name)
		}
	}
}

func BenchmarkClassifyT400(b *testing.B) {
	us := tCohort()
	for b.Loop() {
		if _, err := Classify(us, TClasses(), Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCarePath100(b *testing.B) {
	eps := paperCohort(195, 23)
	for b.Loop() {
		if _, err := CarePath(eps, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvidencePanel100(b *testing.B) {
	s := configs.DefaultStructures()
	pts := panel(s, 100)
	for b.Loop() {
		if _, err := Evidence(pts, s, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

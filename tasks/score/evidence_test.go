package score

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/extract"
)

// panelFindings gives one finding per card (27), invaded where listed as
// "structure" or "structure/side".
func panelFindings(s *configs.Structures, invaded ...string) []Finding {
	var out []Finding
	for _, card := range s.Cards() {
		id, side, _ := strings.Cut(card, "/")
		inv := 0
		for _, x := range invaded {
			if x == card || x == id {
				inv = 1
			}
		}
		out = append(out, Finding{Structure: id, Side: side, Invasion: inv})
	}
	return out
}

// perfectCards answers every card with its gold structure and invasion.
func perfectCards(findings []Finding) []CardUnit {
	var cards []CardUnit
	for i, f := range findings {
		cards = append(cards, CardUnit{
			Item: fmt.Sprintf("card%02d", i),
			Gold: f,
			Pred: extract.Card{Structure: answer(f.Structure), Invasion: answer(fmt.Sprint(f.Invasion))},
		})
	}
	return cards
}

// a8 runs the real extractor on an A8 answer with the listed structures
// invaded.
func a8(s *configs.Structures, tStage string, invaded ...string) *StagingUnit {
	inv := map[string]int{}
	for _, id := range s.IDs() {
		inv[id] = 0
	}
	for _, id := range invaded {
		inv[id] = 1
	}
	b, _ := json.Marshal(map[string]any{"structure_invasion": inv, "t_stage": tStage})
	return &StagingUnit{Pred: extract.TStaging("```json\n"+string(b)+"\n```", s)}
}

func cardIndex(cards []CardUnit, id, side string) int {
	for i, c := range cards {
		if c.Gold.Structure == id && c.Gold.Side == side {
			return i
		}
	}
	panic("no card " + id + "/" + side)
}

func TestEvidenceHandWorked(t *testing.T) {
	s := configs.DefaultStructures()

	// Patient A, gold T3: clivus (T3) and the left parapharyngeal space (T2).
	fa := panelFindings(s, "clivus", "parapharyngeal_space/left")
	ca := perfectCards(fa)
	// The clivus card is read as the sphenoid sinus, invaded: structure
	// wrong, joint wrong; the model slot gets sphenoid_sinus (T3) instead.
	ca[cardIndex(ca, "clivus", "")].Pred.Structure = answer("sphenoid_sinus")
	// The left parapharyngeal card: right structure, invasion missed.
	ca[cardIndex(ca, "parapharyngeal_space", "left")].Pred.Invasion = answer("0")

	// Patient B, gold T4: the right cavernous sinus.
	fb := panelFindings(s, "cavernous_sinus/right")
	cb := perfectCards(fb)
	// Its card's structure fails to extract but its invasion is 1: the
	// oracle slot still stages T4, the model slot cannot place it (T1).
	cb[cardIndex(cb, "cavernous_sinus", "right")].Pred.Structure = failed(extract.OutOfCategory)

	// Patient C, gold T4 with only the clivus invaded: the gold rule gives
	// T3, the ceiling's one miss (the paper's 99/100). No cards, no A8.
	fc := panelFindings(s, "clivus")

	patients := []PanelPatient{
		{Patient: "A", TStage: "T3", Findings: fa, Cards: ca,
			Staging: a8(s, "T3", "clivus", "parapharyngeal_space")}, // all 18 right, T right
		{Patient: "B", TStage: "T4", Findings: fb, Cards: cb,
			Staging: a8(s, "T4")}, // cavernous sinus missed: 17/18, T right
		{Patient: "C", TStage: "T4", Findings: fc},
	}
	es, err := Evidence(patients, s, Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if es.Patients != 3 || es.Cards != 54 || !es.Complete {
		t.Errorf("patients %d cards %d complete %v; want 3, 54, true", es.Patients, es.Cards, es.Complete)
	}
	checkScore(t, "structure", es.Structure, 52, 54)
	// Of the 52 correctly identified cards, only A's parapharyngeal card has
	// the wrong invasion.
	checkScore(t, "invasion | structure", es.InvasionGivenStructure, 51, 52)
	checkScore(t, "joint", es.Joint, 51, 54)
	checkScore(t, "oracle-slot T", es.OracleSlotT, 2, 2)
	checkScore(t, "model-slot T", es.ModelSlotT, 1, 2)
	checkScore(t, "gold-rule T", es.GoldRuleT, 2, 3)
	checkScore(t, "Pt.Inv", es.PtInv, 1+17.0/18, 2)
	checkScore(t, "Complete Inv", es.CompleteInv, 1, 2)
	checkScore(t, "Direct T", es.DirectT, 2, 2)
	checkScore(t, "EG T", es.EGT, 1, 2)
	if len(es.StructureFailures) != 1 || es.StructureFailures[0].Kind != extract.OutOfCategory {
		t.Errorf("structure failures %+v, want one out_of_category", es.StructureFailures)
	}
	if es.DirectTClasses == nil || es.DirectTClasses.Units != 2 {
		t.Fatalf("direct T class table %+v, want 2 units", es.DirectTClasses)
	}
	checkPercent(t, "T4 recall", es.DirectTClasses.Classes[3].Recall, 100)
	for name, sc := range map[string]*Score{"EG T": es.EGT, "Complete Inv": es.CompleteInv, "gold rule": es.GoldRuleT} {
		if sc.Exact == nil {
			t.Errorf("%s counts patients: want an exact interval", name)
		}
	}
}

func TestGoldRuleOnGoldEvidence(t *testing.T) {
	// The deterministic rule on gold evidence reproduces the gold T of
	// patients whose stage follows from the 18 structures.
	s := configs.DefaultStructures()
	cases := []struct {
		gold    string
		invaded []string
	}{
		{"T1", nil},
		{"T1", []string{"levator_veli_palatini/left", "carotid_sheath"}}, // these never upstage
		{"T2", []string{"medial_pterygoid/right"}},
		{"T2", []string{"longus_capitis", "nasal_passage"}},
		{"T3", []string{"pterygoid_base/left", "parapharyngeal_space"}},
		{"T3", []string{"sphenoid_sinus"}},
		{"T3", []string{"atlas"}},
		{"T4", []string{"cavernous_sinus/left", "clivus"}},
	}
	var pts []PanelPatient
	for i, c := range cases {
		pts = append(pts, PanelPatient{Patient: fmt.Sprint(i), TStage: c.gold, Findings: panelFindings(s, c.invaded...)})
	}
	es, err := Evidence(pts, s, Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkScore(t, "gold rule", es.GoldRuleT, float64(len(cases)), len(cases))
	if es.Structure != nil || es.PtInv != nil {
		t.Error("no cards and no A8 answers: card and A8 metrics should be absent")
	}
}

func TestEvidenceNotRunAndErrors(t *testing.T) {
	s := configs.DefaultStructures()
	f := panelFindings(s, "clivus")
	cards := perfectCards(f)
	cards[0].NotRun = true
	es, err := Evidence([]PanelPatient{
		{Patient: "A", TStage: "T3", Findings: f, Cards: cards, Staging: &StagingUnit{NotRun: true}},
	}, s, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if es.NotRun != 2 || es.Complete || es.Cards != 26 {
		t.Errorf("not-run %d complete %v cards %d; want 2, false, 26", es.NotRun, es.Complete, es.Cards)
	}
	checkScore(t, "structure", es.Structure, 26, 26)
	if es.OracleSlotT != nil || es.PtInv != nil || es.DirectT != nil {
		t.Error("a patient with a not-run card or A8 answer must leave the patient-level metrics")
	}
	if es.DirectTClasses == nil || es.DirectTClasses.NotRun != 1 {
		t.Error("the not-run A8 answer should be counted in the direct T table")
	}

	bad := []PanelPatient{
		{Patient: "X", TStage: "T3", Findings: []Finding{{Structure: "hippocampus", Invasion: 1}}},
		{Patient: "Y", TStage: "T3a", Findings: f},
		{Patient: "Z", TStage: "T3", Findings: f[:5], Staging: a8(s, "T3")},
	}
	for _, p := range bad {
		if _, err := Evidence([]PanelPatient{p}, s, Options{Draws: -1}); err == nil || !strings.Contains(err.Error(), p.Patient) {
			t.Errorf("patient %s: error %v should name the patient", p.Patient, err)
		}
	}
}

package score

import (
	"fmt"
	"sort"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/extract"
)

// Finding is one gold annotation of the anatomical panel: a base structure
// (a configs.Structures id), its side ("left", "right", "" for midline) and
// whether it is invaded (0/1). One finding per card.
type Finding struct {
	Structure string `json:"structure"`
	Side      string `json:"side,omitempty"`
	Invasion  int    `json:"invasion"`
}

// CardUnit is one structure card (prompt A7) with its gold finding.
type CardUnit struct {
	Item   string       `json:"item"`
	Gold   Finding      `json:"gold"`
	Pred   extract.Card `json:"pred"`
	NotRun bool         `json:"not_run,omitempty"`
}

// StagingUnit is a patient-level T-staging answer (prompt A8) with its 18
// invasion labels.
type StagingUnit struct {
	Pred   extract.Staging `json:"pred"`
	NotRun bool            `json:"not_run,omitempty"`
}

// PanelPatient is one patient of the anatomical panel.
type PanelPatient struct {
	Patient string `json:"patient"`
	// TStage is the gold T category.
	TStage string `json:"t_stage"`
	// Findings are the gold annotations; per base structure they collapse
	// to one label, invaded when either side is.
	Findings []Finding `json:"findings"`
	// Cards are the patient's A7 answers; empty when the run had none.
	Cards []CardUnit `json:"cards,omitempty"`
	// Staging is the patient's A8 answer; nil when the run had none.
	Staging *StagingUnit `json:"staging,omitempty"`
}

// EvidenceScore holds the anatomical-panel diagnostics (Tables A13–A17).
// Card metrics weight every card equally; the rest are patient-level.
type EvidenceScore struct {
	Patients int `json:"patients"`
	// Cards counts scored cards; NotRun counts cards and staging answers
	// without an answer (their patients leave the patient-level metrics
	// they feed); Complete is true when NotRun is 0.
	Cards    int  `json:"cards"`
	NotRun   int  `json:"not_run"`
	Complete bool `json:"complete"`
	// Structure is card-micro structure accuracy (left/right collapsed).
	Structure *Score `json:"structure,omitempty"`
	// InvasionGivenStructure is invasion accuracy over the cards whose
	// structure was identified correctly.
	InvasionGivenStructure *Score `json:"invasion_given_structure,omitempty"`
	// Joint is structure and invasion both right, over all cards.
	Joint *Score `json:"joint,omitempty"`
	// StructureFailures and InvasionFailures tally failed card fields.
	StructureFailures []FailureCount `json:"structure_failures,omitempty"`
	InvasionFailures  []FailureCount `json:"invasion_failures,omitempty"`
	// OracleSlotT applies the deterministic T rule to the card answers'
	// invasion placed in the gold structure slots; ModelSlotT places it in
	// the model's predicted structure slots. A slot no card fills, or only a
	// failed one, is 0 (not invaded). Sides collapse by OR.
	OracleSlotT *Score `json:"oracle_slot_t,omitempty"`
	ModelSlotT  *Score `json:"model_slot_t,omitempty"`
	// GoldRuleT applies the rule to the gold findings: the ceiling of the
	// 18-structure abstraction (99/100 in the paper).
	GoldRuleT *Score `json:"gold_rule_t,omitempty"`
	// PtInv is the mean over patients of the share of the 18 A8 invasion
	// labels answered right; CompleteInv the share of patients with all 18
	// right; DirectT the A8 t_stage accuracy; EGT both complete and right.
	PtInv       *Score `json:"pt_inv,omitempty"`
	CompleteInv *Score `json:"complete_inv,omitempty"`
	DirectT     *Score `json:"direct_t,omitempty"`
	EGT         *Score `json:"eg_t,omitempty"`
	// DirectTClasses is the class table of the A8 t_stage (balanced T,
	// per-stage recall).
	DirectTClasses *TaskScore `json:"direct_t_classes,omitempty"`
}

// Evidence scores the anatomical panel against the structure list s (its
// ids are the 18 labels and its t_level the T rule). A gold finding naming
// no structure of s, a gold T outside T1..T4, a patient listed twice, or an
// A8 answer for a patient whose findings do not cover every structure is an
// error naming the patient.
func Evidence(patients []PanelPatient, s *configs.Structures, opt Options) (EvidenceScore, error) {
	opt, err := opt.resolved()
	if err != nil {
		return EvidenceScore{}, err
	}
	pts := append([]PanelPatient(nil), patients...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Patient < pts[j].Patient })
	var es EvidenceScore
	es.Patients = len(pts)
	ps := newPanelStats(len(pts), s)
	for i, pt := range pts {
		if i > 0 && pt.Patient == pts[i-1].Patient {
			return EvidenceScore{}, fmt.Errorf("score: panel patient %s is listed twice; give one entry per patient", pt.Patient)
		}
		if err := ps.addPatient(&es, i, pt); err != nil {
			return EvidenceScore{}, err
		}
	}
	es.Complete = es.NotRun == 0
	if err := ps.score(&es, opt); err != nil {
		return EvidenceScore{}, err
	}
	return es, nil
}

// panelStats gathers the anatomical panel's per-patient statistics: a
// [numerator, denominator] row per patient for each patient-level score
// (zeros where the patient's answers were not run), the card columns, the
// extraction failures and the direct T units.
type panelStats struct {
	s   *configs.Structures
	ids []string
	// cards: struct ok, cards, inv ok | struct ok, struct ok, joint ok.
	cards                       [][]float64
	oracle, model, gold         [][]float64
	ptInv, complete, direct, eg [][]float64
	structFail, invFail         map[extract.FailureKind]int
	directUnits                 []Unit
}

func newPanelStats(n int, s *configs.Structures) *panelStats {
	return &panelStats{
		s: s, ids: s.IDs(),
		cards:  make([][]float64, n),
		oracle: make([][]float64, n), model: make([][]float64, n), gold: make([][]float64, n),
		ptInv: make([][]float64, n), complete: make([][]float64, n), direct: make([][]float64, n), eg: make([][]float64, n),
		structFail: map[extract.FailureKind]int{}, invFail: map[extract.FailureKind]int{},
	}
}

// addPatient adds patient i: the T stage its gold findings give under the
// T rule, its cards (A7) and its staging answer (A8).
func (ps *panelStats) addPatient(es *EvidenceScore, i int, pt PanelPatient) error {
	if indexOf(TClasses(), pt.TStage) < 0 {
		return fmt.Errorf("score: panel patient %s: gold T stage %q is not one of T1..T4; check the dataset's t_stage", pt.Patient, pt.TStage)
	}
	goldInv, covered, err := goldInvasion(pt, ps.s)
	if err != nil {
		return err
	}
	zero := []float64{0, 0}
	ps.oracle[i], ps.model[i], ps.gold[i] = zero, zero, zero
	ps.ptInv[i], ps.complete[i], ps.direct[i], ps.eg[i] = zero, zero, zero, zero
	if len(pt.Findings) > 0 {
		ps.gold[i] = []float64{b2f(ps.s.TRule(invadedIDs(goldInv, ps.ids)) == pt.TStage), 1}
	}
	if err := ps.addCards(es, i, pt); err != nil {
		return err
	}
	return ps.addStaging(es, i, pt, goldInv, covered)
}

// addCards scores patient i's structure cards (A7): structure, invasion
// given the structure and both, per card; and, when every card was run,
// the T stage the rule gives from the invasions the cards found (on the
// gold structures: oracle slots; on the model's: model slots).
func (ps *panelStats) addCards(es *EvidenceScore, i int, pt PanelPatient) error {
	var v [5]float64
	cardsRun := len(pt.Cards) > 0
	oracleInv, modelInv := map[string]bool{}, map[string]bool{}
	for _, c := range pt.Cards {
		if c.NotRun {
			es.NotRun++
			cardsRun = false
			continue
		}
		if _, ok := ps.s.Get(c.Gold.Structure); !ok {
			return fmt.Errorf("score: panel patient %s card %s: gold structure %q is not in the structure list; check the dataset or configs/structures.yaml", pt.Patient, c.Item, c.Gold.Structure)
		}
		es.Cards++
		structOK := c.Pred.Structure.Is(c.Gold.Structure)
		invOK := c.Pred.Invasion.Is(fmt.Sprint(c.Gold.Invasion))
		v[0] += b2f(structOK)
		v[1]++
		if structOK {
			v[2] += b2f(invOK)
			v[3]++
		}
		v[4] += b2f(structOK && invOK)
		if f := c.Pred.Structure.Failure; f != nil {
			ps.structFail[f.Kind]++
		}
		if f := c.Pred.Invasion.Failure; f != nil {
			ps.invFail[f.Kind]++
		}
		if c.Pred.Invasion.Is("1") {
			oracleInv[c.Gold.Structure] = true
			if c.Pred.Structure.OK() {
				modelInv[c.Pred.Structure.Value] = true
			}
		}
	}
	ps.cards[i] = v[:]
	if cardsRun {
		ps.oracle[i] = []float64{b2f(ps.s.TRule(invadedIDs(oracleInv, ps.ids)) == pt.TStage), 1}
		ps.model[i] = []float64{b2f(ps.s.TRule(invadedIDs(modelInv, ps.ids)) == pt.TStage), 1}
	}
	return nil
}

// addStaging scores patient i's staging answer (A8), if it has one: the
// share of the structures whose invasion it labels right (Pt.Inv), all of
// them right (Complete Inv), its T stage (Direct T) and both (EG-T).
func (ps *panelStats) addStaging(es *EvidenceScore, i int, pt PanelPatient, goldInv map[string]bool, covered bool) error {
	st := pt.Staging
	if st == nil {
		return nil
	}
	if st.NotRun {
		es.NotRun++
		ps.directUnits = append(ps.directUnits, Unit{Patient: pt.Patient, Item: "t_stage", Gold: pt.TStage, NotRun: true})
		return nil
	}
	if !covered {
		return fmt.Errorf("score: panel patient %s: the gold findings do not cover all %d structures, so Pt.Inv and Complete Inv cannot be scored; add the missing findings to the dataset", pt.Patient, len(ps.ids))
	}
	right := 0
	for _, id := range ps.ids {
		want := "0"
		if goldInv[id] {
			want = "1"
		}
		if stagingLabel(st.Pred, id).Is(want) {
			right++
		}
	}
	all := right == len(ps.ids)
	tOK := st.Pred.TStage.Is(pt.TStage)
	ps.ptInv[i] = []float64{float64(right) / float64(len(ps.ids)), 1}
	ps.complete[i] = []float64{b2f(all), 1}
	ps.direct[i] = []float64{b2f(tOK), 1}
	ps.eg[i] = []float64{b2f(all && tOK), 1}
	ps.directUnits = append(ps.directUnits, Unit{Patient: pt.Patient, Item: "t_stage", Gold: pt.TStage, Pred: st.Pred.TStage})
	return nil
}

// score turns the statistics into es's scores, each with its bootstrap
// interval (over patients), exact intervals for the patient-level
// proportions, and the direct T answers' class table.
func (ps *panelStats) score(es *EvidenceScore, opt Options) error {
	es.StructureFailures, es.InvasionFailures = failureList(ps.structFail), failureList(ps.invFail)
	rs := newResampler(len(ps.cards), opt)
	es.Structure = scoreAt(ps.cards, 0, 1, rs)
	es.InvasionGivenStructure = scoreAt(ps.cards, 2, 3, rs)
	es.Joint = scoreAt(ps.cards, 4, 1, rs)
	es.OracleSlotT = scoreAt(ps.oracle, 0, 1, rs)
	es.ModelSlotT = scoreAt(ps.model, 0, 1, rs)
	es.GoldRuleT = scoreAt(ps.gold, 0, 1, rs)
	es.PtInv = scoreAt(ps.ptInv, 0, 1, rs)
	es.CompleteInv = scoreAt(ps.complete, 0, 1, rs)
	es.DirectT = scoreAt(ps.direct, 0, 1, rs)
	es.EGT = scoreAt(ps.eg, 0, 1, rs)
	for _, sc := range []*Score{es.OracleSlotT, es.ModelSlotT, es.GoldRuleT, es.CompleteInv, es.DirectT, es.EGT} {
		opt.exact(sc)
	}
	if len(ps.directUnits) > 0 {
		ts, err := Classify(ps.directUnits, TClasses(), opt)
		if err != nil {
			return err
		}
		es.DirectTClasses = &ts
	}
	return nil
}

// scoreAt builds a ratio score from columns num and den of per-patient
// statistics, with its bootstrap interval.
func scoreAt(stats [][]float64, num, den int, rs *resampler) *Score {
	var a, b float64
	for _, s := range stats {
		a += s[num]
		b += s[den]
	}
	sc := newScore(a, int(b))
	if sc != nil {
		sc.Bootstrap = rs.interval(stats, ratio(num, den))
	}
	return sc
}

// goldInvasion collapses a patient's findings to one label per structure
// (invaded when any side is) and reports whether every structure of s has
// a finding.
func goldInvasion(pt PanelPatient, s *configs.Structures) (map[string]bool, bool, error) {
	inv := map[string]bool{}
	seen := map[string]bool{}
	for _, f := range pt.Findings {
		if _, ok := s.Get(f.Structure); !ok {
			return nil, false, fmt.Errorf("score: panel patient %s: gold finding names structure %q, which is not in the structure list; check the dataset or configs/structures.yaml", pt.Patient, f.Structure)
		}
		if f.Invasion != 0 && f.Invasion != 1 {
			return nil, false, fmt.Errorf("score: panel patient %s: gold invasion of %s is %d; want 0 or 1", pt.Patient, f.Structure, f.Invasion)
		}
		seen[f.Structure] = true
		inv[f.Structure] = inv[f.Structure] || f.Invasion == 1
	}
	return inv, len(seen) == len(s.List), nil
}

// invadedIDs lists the invaded ids in structure-list order.
func invadedIDs(inv map[string]bool, ids []string) []string {
	var out []string
	for _, id := range ids {
		if inv[id] {
			out = append(out, id)
		}
	}
	return out
}

// stagingLabel is the A8 invasion label for one structure; a structure the
// answer does not list is a missing field.
func stagingLabel(st extract.Staging, id string) extract.Label {
	for _, l := range st.Invasion {
		if l.Structure == id {
			return l.Label
		}
	}
	return extract.Label{Failure: &extract.Failure{Kind: extract.MissingField, Field: "structure_invasion." + id}}
}

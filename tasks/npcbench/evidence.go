package npcbench

import (
	"sort"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/score"
)

// Evidence is the anatomical panel (Tables A13–A17): the structure cards
// (A7) and the T staging from those cards (A8) of the same patients, scored
// against their findings: structure, invasion, Pt.Inv, Complete Inv,
// Direct and evidence-grounded T, and the T rule on predicted evidence.
const Evidence = "evidence"

func evidence(st *configs.Structures) *score.Composite {
	return &score.Composite{
		Name:  Evidence,
		Tasks: []string{Card, TCards},
		Score: func(a *score.Answers, mr *score.ModelResults) error {
			ev, err := scoreEvidence(a, st)
			if err != nil {
				return err
			}
			mr.Evidence = ev
			return nil
		},
		Tables: func(mr *score.ModelResults) []score.ClassTable {
			if mr.Evidence == nil || mr.Evidence.DirectTClasses == nil {
				return nil
			}
			return []score.ClassTable{{Key: "direct_t", Title: "Direct T on the anatomical panel", Score: mr.Evidence.DirectTClasses}}
		},
		Failures: func(mr *score.ModelResults) []score.FailureTally {
			if mr.Evidence == nil {
				return nil
			}
			return []score.FailureTally{{Name: Card + " structure", Failures: mr.Evidence.StructureFailures},
				{Name: Card + " invasion", Failures: mr.Evidence.InvasionFailures}}
		},
	}
}

// anatomy gathers the anatomical panel's patients, in id order.
type anatomy struct {
	a     *score.Answers
	byID  map[string]*score.PanelPatient
	order []string
}

func (pl *anatomy) patient(id string) (*score.PanelPatient, error) {
	if pp, ok := pl.byID[id]; ok {
		return pp, nil
	}
	p, err := pl.a.Patient(id)
	if err != nil {
		return nil, err
	}
	pp := &score.PanelPatient{Patient: id, TStage: p.TStage}
	for _, f := range p.Structures {
		pp.Findings = append(pp.Findings, score.Finding{Structure: f.Structure, Side: f.Side, Invasion: f.Invasion})
	}
	pl.byID[id] = pp
	pl.order = append(pl.order, id)
	return pp, nil
}

func scoreEvidence(a *score.Answers, st *configs.Structures) (*score.EvidenceScore, error) {
	pl := &anatomy{a: a, byID: map[string]*score.PanelPatient{}}
	for _, it := range a.Items(Card) {
		pp, err := pl.patient(it.Patient)
		if err != nil {
			return nil, err
		}
		content, notRun := a.Content(it)
		pp.Cards = append(pp.Cards, score.CardUnit{Item: it.ID,
			Gold:   score.Finding{Structure: it.Gold.Structure, Side: it.Gold.Side, Invasion: it.Gold.Invasion},
			Pred:   extract.StructureCard(content, st),
			NotRun: notRun})
	}
	for _, it := range a.Items(TCards) {
		pp, err := pl.patient(it.Patient)
		if err != nil {
			return nil, err
		}
		content, notRun := a.Content(it)
		pp.Staging = &score.StagingUnit{Pred: extract.TStaging(content, st), NotRun: notRun}
	}
	sort.Strings(pl.order)
	list := make([]score.PanelPatient, len(pl.order))
	for i, id := range pl.order {
		list[i] = *pl.byID[id]
	}
	ev, err := score.Evidence(list, st, a.Options())
	if err != nil {
		return nil, err
	}
	return &ev, nil
}

// structureColumn is Table 1's Struct.: card-micro structure accuracy.
func structureColumn() score.Column {
	return score.Column{Name: "Struct.", Level: "L3", Pick: func(m score.ModelResults) (*score.Score, bool) {
		if m.Evidence == nil {
			return nil, true
		}
		return m.Evidence.Structure, m.Evidence.Complete
	}}
}

package npcbench

import (
	"fmt"
	"iter"
	"slices"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
)

// controlMix is a control care question at the paper's scale: 146
// questions of 25 patients.
var controlMix = schedule.RequestMix{Requests: 146, TextTokens: 1500, MaxTokens: 1024}

// questionEdit rewrites a control question for a condition: the findings
// it is given.
type questionEdit func(p *dataset.Patient, q dataset.CareQuestion) (dataset.CareQuestion, error)

// buildControlCare makes one item per control question of each patient of
// the control cohort, its question rewritten by edit.
func buildControlCare(b *tasks.Builder, edit questionEdit) {
	for _, its := range controlItems(b, edit) {
		for _, it := range its {
			b.Add(it)
		}
	}
}

// controlItems yields each control-cohort patient's items; a question that
// cannot be asked or rewritten is reported and left out.
func controlItems(b *tasks.Builder, edit questionEdit) iter.Seq2[*dataset.Patient, []tasks.Item] {
	return func(yield func(*dataset.Patient, []tasks.Item) bool) {
		for p := range b.Patients() {
			if p.Episode == nil || len(p.Episode.ControlQuestions) == 0 {
				b.Problem(b.ItemID(p.ID), "the control-cohort patient has no control questions")
				continue
			}
			var its []tasks.Item
			for _, q := range p.Episode.ControlQuestions {
				id := b.ItemID(p.ID, q.ID)
				if !slices.Contains(letters(&q), q.Answer) {
					b.Problem(id, fmt.Sprintf("reference answer %q is not one of the options", q.Answer))
					continue
				}
				q, err := edit(p, q)
				if err != nil {
					b.Problem(id, err.Error())
					continue
				}
				its = append(its, tasks.Item{ID: id, Patient: p.ID, Gold: tasks.Gold{Label: q.Answer}, Care: &q,
					Context: p.Episode.Context, Excluded: q.Excluded})
			}
			if !yield(p, its) {
				return
			}
		}
	}
}

// asked leaves a control question as the dataset has it.
func asked(_ *dataset.Patient, q dataset.CareQuestion) (dataset.CareQuestion, error) { return q, nil }

// withoutFindings drops the image findings a question injects; its
// supplied fields stay.
func withoutFindings(_ *dataset.Patient, q dataset.CareQuestion) (dataset.CareQuestion, error) {
	q.Inject = nil
	return q, nil
}

// withReference replaces the image findings a question injects with the
// patient's reference labels, given as supplied fields before the
// question's own.
func withReference(st *configs.Structures) questionEdit {
	return func(p *dataset.Patient, q dataset.CareQuestion) (dataset.CareQuestion, error) {
		f, err := referenceFindings(st, p)
		if err != nil {
			return q, err
		}
		var ref []dataset.Supplied
		for _, inj := range q.Inject {
			switch inj {
			case dataset.InjectPathology:
				ref = append(ref, dataset.Supplied{Field: "Pathology (reference)", Value: pathologyValue(f.Pathology)})
			case dataset.InjectTStage:
				ref = append(ref, dataset.Supplied{Field: "MRI T stage (reference)", Value: f.TStage})
			case dataset.InjectStructures:
				ref = append(ref, dataset.Supplied{Field: "Invaded structures (reference)", Value: invadedValue(f.Invaded)})
			}
		}
		q.Inject, q.Supplied = nil, append(ref, q.Supplied...)
		return q, nil
	}
}

// referenceFindings are a patient's reference pathology, T stage and
// invaded structures (either side), as the dataset labels them.
func referenceFindings(st *configs.Structures, p *dataset.Patient) (Findings, error) {
	if p.Pathology == nil {
		return Findings{}, fmt.Errorf("patient %s has no pathology label for the reference findings", p.ID)
	}
	if !validLabel(p.TStage, "T1", "T2", "T3", "T4") {
		return Findings{}, fmt.Errorf("patient %s: T stage %q is not T1..T4", p.ID, p.TStage)
	}
	inv, err := CollapseInvasion(st, p.Structures)
	if err != nil {
		return Findings{}, fmt.Errorf("patient %s: %w", p.ID, err)
	}
	f := Findings{Pathology: fmt.Sprint(p.Pathology.Label), TStage: p.TStage, Invaded: []string{}}
	for _, id := range st.IDs() {
		if inv[id] == 1 {
			f.Invaded = append(f.Invaded, id)
		}
	}
	return f, nil
}

// suppliedOnly writes a question's supplied fields as its prior lines: the
// reference findings a rewritten question carries, and the question's own.
func suppliedOnly(it tasks.Item, _ map[string]*journal.Record) []string {
	return PriorFindings(it.Care, Findings{})
}

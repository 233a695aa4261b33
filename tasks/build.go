package tasks

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// ItemProblem is an item that could not be built, and why. A campaign goes
// on without it and reports it.
type ItemProblem struct {
	Item   string
	Reason string
}

func (p ItemProblem) Error() string { return p.Item + ": " + p.Reason }

// BuildItems turns a raw dataset and its prepared images into the items of
// the given tasks, in a stable order (registry order of the tasks, then
// what each task's builder makes, in dataset order). Items that cannot be
// built are returned as problems; a task the registry does not know is an
// error.
func BuildItems(reg *Registry, raw *dataset.Raw, prep *dataset.Prepared, keys []string) ([]Item, []ItemProblem, error) {
	prepared := make(map[string]*dataset.PreparedPatient, len(prep.Patients))
	for i := range prep.Patients {
		prepared[prep.Patients[i].ID] = &prep.Patients[i]
	}
	selected, err := reg.Select(keys)
	if err != nil {
		return nil, nil, err
	}
	b := &Builder{raw: raw, prepared: prepared}
	for _, key := range selected {
		b.task = reg.byKey[key]
		if b.task.Build != nil {
			b.task.Build(b)
		}
	}
	return b.items, b.problems, nil
}

// Builder collects the items a task's Build makes, and the problems of
// those it cannot make.
type Builder struct {
	task     *Task
	raw      *dataset.Raw
	prepared map[string]*dataset.PreparedPatient
	items    []Item
	problems []ItemProblem
}

// ItemID is the id of an item of the task being built: "TASK/PATIENT",
// then the parts.
func (b *Builder) ItemID(patient string, parts ...string) string {
	return strings.Join(append([]string{b.task.Key, patient}, parts...), "/")
}

// Consultations are the dataset's O1 cases.
func (b *Builder) Consultations() []dataset.ConsultCase { return b.raw.Consultations }

// Add adds an item of the task being built.
func (b *Builder) Add(it Item) {
	it.Task = b.task.Key
	b.items = append(b.items, it)
}

// Problem reports an item that cannot be built, and why.
func (b *Builder) Problem(item, reason string) {
	b.problems = append(b.problems, ItemProblem{Item: item, Reason: reason})
}

// Patients yields the patients of the task's cohort, in dataset order,
// with their prepared images. A patient prep has no images for, or whose
// images for the task prep could not make, is reported as a problem and
// skipped; for a PerImage task only the items of the missing images are,
// and the patient is yielded.
func (b *Builder) Patients() iter.Seq2[*dataset.Patient, *dataset.PreparedPatient] {
	return func(yield func(*dataset.Patient, *dataset.PreparedPatient) bool) {
		for i := range b.raw.Patients {
			p := &b.raw.Patients[i]
			if !slices.Contains(p.Cohorts, b.task.Cohort) {
				continue
			}
			pp := b.prepared[p.ID]
			if pp == nil {
				b.Problem(b.ItemID(p.ID), "no prepared images for this patient; run `npcorch prep` on the dataset again")
				continue
			}
			if !b.complete(p, pp) {
				continue
			}
			if !yield(p, pp) {
				return
			}
		}
	}
}

// complete reports the images of the task prep could not make for a
// patient, and whether the patient's items can still be built.
func (b *Builder) complete(p *dataset.Patient, pp *dataset.PreparedPatient) bool {
	failed := lacking(b.task.Images, pp)
	if len(failed) == 0 {
		return true
	}
	if !b.task.PerImage || failed[0].Kind == dataset.KindPatient {
		b.Problem(b.ItemID(p.ID), lackReason(failed))
		return false
	}
	for _, f := range failed { // one item per image: the others are built
		b.Problem(imageItemID(b.ItemID(p.ID), f), lackReason([]dataset.ImageFailure{f}))
	}
	return true
}

// lacking returns the images of the given kinds that prep could not make
// (the manifest's failures), a whole-patient failure first.
func lacking(kinds []string, pp *dataset.PreparedPatient) []dataset.ImageFailure {
	var out []dataset.ImageFailure
	for _, f := range pp.Failed {
		if f.Kind == dataset.KindPatient {
			return []dataset.ImageFailure{f}
		}
		if slices.Contains(kinds, f.Kind) {
			out = append(out, f)
		}
	}
	return out
}

// imageItemID is the id of the one-image item a failed panel or card
// stood for.
func imageItemID(taskID string, f dataset.ImageFailure) string {
	switch {
	case f.Kind == dataset.KindPanel:
		return taskID + "/" + f.Sequence
	case f.Side != "":
		return taskID + "/" + f.Structure + "/" + f.Side
	}
	return taskID + "/" + f.Structure
}

// lackReason names the missing images (the first three) and prep's
// reasons.
func lackReason(failed []dataset.ImageFailure) string {
	var parts []string
	for _, f := range failed[:min(len(failed), 3)] {
		parts = append(parts, fmt.Sprintf("%s (%s)", f.Path, f.Reason))
	}
	if len(failed) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", len(failed)-3))
	}
	return fmt.Sprintf("lacks %d image(s) that `npcorch prep` could not make: %s; fix the inputs and run `npcorch prep` again",
		len(failed), strings.Join(parts, "; "))
}

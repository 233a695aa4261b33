package tasks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
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
// the given tasks, in a stable order (task order of configs.TaskKeys, then
// dataset order). Items that cannot be built are returned as problems.
func BuildItems(raw *dataset.Raw, prep *dataset.Prepared, st *configs.Structures, tasks []string) ([]Item, []ItemProblem) {
	prepared := make(map[string]*dataset.PreparedPatient, len(prep.Patients))
	for i := range prep.Patients {
		prepared[prep.Patients[i].ID] = &prep.Patients[i]
	}
	want := map[string]bool{}
	for _, t := range tasks {
		want[t] = true
	}
	b := builder{st: st}
	for _, task := range configs.TaskKeys {
		if !want[task] {
			continue
		}
		for i := range raw.Patients {
			p := &raw.Patients[i]
			if !slices.Contains(p.Cohorts, cohortOf(task)) {
				continue
			}
			pp := prepared[p.ID]
			if pp == nil {
				b.problem(task+"/"+p.ID, "no prepared images for this patient; run `npcorch prep` on the dataset again")
				continue
			}
			b.build(task, p, pp)
		}
	}
	return b.items, b.problems
}

func cohortOf(task string) string {
	switch task {
	case configs.TaskPathology:
		return dataset.CohortPathology
	case configs.TaskSequence:
		return dataset.CohortSequence
	case configs.TaskCard, configs.TaskTCards:
		return dataset.CohortCards
	case configs.TaskTGroups:
		return dataset.CohortTGroups
	case configs.TaskNGroups:
		return dataset.CohortNGroups
	default:
		return dataset.CohortCarePath
	}
}

type builder struct {
	st       *configs.Structures
	items    []Item
	problems []ItemProblem
}

func (b *builder) problem(item, reason string) {
	b.problems = append(b.problems, ItemProblem{Item: item, Reason: reason})
}

func (b *builder) add(it Item) { b.items = append(b.items, it) }

func (b *builder) build(task string, p *dataset.Patient, pp *dataset.PreparedPatient) {
	id := task + "/" + p.ID
	if failed := lacking(task, pp); len(failed) > 0 {
		if task != configs.TaskSequence && task != configs.TaskCard || failed[0].Kind == dataset.KindPatient {
			b.problem(id, lackReason(failed))
			return
		}
		for _, f := range failed { // one item per image: the others are built
			b.problem(imageItemID(id, f), lackReason([]dataset.Failure{f}))
		}
	}
	switch task {
	case configs.TaskPathology, configs.TaskCPPathology:
		if p.Pathology == nil || pp.Overview == nil {
			b.problem(id, "the patient has no pathology overview; add a slide to dataset.json or drop the patient from the cohort")
			return
		}
		if p.Pathology.Label != 0 && p.Pathology.Label != 1 {
			b.problem(id, fmt.Sprintf("pathology label %d is not 0 or 1", p.Pathology.Label))
			return
		}
		b.add(Item{ID: id, Task: task, Patient: p.ID, Images: []dataset.Image{*pp.Overview},
			Gold: Gold{Label: strconv.Itoa(p.Pathology.Label)}})
	case configs.TaskSequence:
		if len(pp.Panels) == 0 {
			b.problem(id, "no sequence panels were prepared")
		}
		for _, panel := range pp.Panels {
			b.add(Item{ID: id + "/" + panel.Sequence, Task: task, Patient: p.ID,
				Images: []dataset.Image{panel.Image}, Gold: Gold{Label: panel.Sequence}})
		}
	case configs.TaskCard:
		for _, card := range pp.Cards {
			cid := id + "/" + card.Structure
			if card.Side != "" {
				cid += "/" + card.Side
			}
			f, ok := findFinding(p, card.Structure, card.Side)
			if !ok {
				b.problem(cid, "the card has no matching finding in dataset.json")
				continue
			}
			if _, known := b.st.Get(card.Structure); !known {
				b.problem(cid, fmt.Sprintf("unknown structure %q; add it to structures.yaml or fix the dataset", card.Structure))
				continue
			}
			b.add(Item{ID: cid, Task: task, Patient: p.ID, Images: []dataset.Image{card.Image},
				Gold: Gold{Structure: card.Structure, Side: card.Side, Invasion: f.Invasion}})
		}
	case configs.TaskTCards:
		imgs := make([]dataset.Image, len(pp.Cards))
		for i, c := range pp.Cards {
			imgs[i] = c.Image
		}
		b.staging(id, task, p, imgs, nil)
	case configs.TaskTGroups:
		imgs, planes := groupImages(pp.TGroups)
		b.staging(id, task, p, imgs, planes)
	case configs.TaskNGroups:
		imgs, planes := groupImages(pp.NGroups)
		if len(imgs) == 0 {
			b.problem(id, "no N-range plane groups were prepared")
			return
		}
		if !validLabel(p.NStage, "N0", "N1", "N2", "N3") {
			b.problem(id, fmt.Sprintf("N stage %q is not N0..N3", p.NStage))
			return
		}
		b.add(Item{ID: id, Task: task, Patient: p.ID, Images: imgs, Planes: planes, Gold: Gold{Label: p.NStage}})
	case configs.TaskCPMRI:
		b.staging(id, task, p, pp.Pages, nil)
	case configs.TaskCPCare:
		if p.Episode == nil {
			b.problem(id, "the carepath patient has no episode")
			return
		}
		for i := range p.Episode.Questions {
			q := p.Episode.Questions[i]
			qid := id + "/" + q.ID
			if !hasOption(q, q.Answer) {
				b.problem(qid, fmt.Sprintf("reference answer %q is not one of the options", q.Answer))
				continue
			}
			b.add(Item{ID: qid, Task: task, Patient: p.ID, Gold: Gold{Label: q.Answer}, Care: &q,
				Context: p.Episode.Context, Excluded: q.Excluded})
		}
	}
}

// imageKindOfTask is the kind of prepared image each task's items show.
var imageKindOfTask = map[string]string{configs.TaskPathology: dataset.KindOverview, configs.TaskCPPathology: dataset.KindOverview,
	configs.TaskSequence: dataset.KindPanel, configs.TaskCard: dataset.KindCard, configs.TaskTCards: dataset.KindCard,
	configs.TaskTGroups: dataset.KindTGroups, configs.TaskNGroups: dataset.KindNGroups, configs.TaskCPMRI: dataset.KindPage}

// lacking returns the images of the task's items that prep could not make
// (the manifest's failures), a whole-patient failure first.
func lacking(task string, pp *dataset.PreparedPatient) []dataset.Failure {
	kind := imageKindOfTask[task]
	var out []dataset.Failure
	for _, f := range pp.Failed {
		if f.Kind == dataset.KindPatient {
			return []dataset.Failure{f}
		}
		if kind != "" && f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// imageItemID is the id of the one-image item a failed panel or card
// stood for.
func imageItemID(taskID string, f dataset.Failure) string {
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
func lackReason(failed []dataset.Failure) string {
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

// staging adds a patient-level T-staging item.
func (b *builder) staging(id, task string, p *dataset.Patient, imgs []dataset.Image, planes []string) {
	if len(imgs) == 0 {
		b.problem(id, "no images were prepared for T staging")
		return
	}
	if !validLabel(p.TStage, "T1", "T2", "T3", "T4") {
		b.problem(id, fmt.Sprintf("T stage %q is not T1..T4", p.TStage))
		return
	}
	inv, err := CollapseInvasion(b.st, p.Structures)
	if err != nil {
		b.problem(id, err.Error())
		return
	}
	b.add(Item{ID: id, Task: task, Patient: p.ID, Images: imgs, Planes: planes,
		Gold: Gold{Label: p.TStage, StructureInvasion: inv}})
}

// CollapseInvasion maps a patient's findings to the 18 base-structure labels:
// a structure is invaded when either side is. Structures without a finding
// are reported, since every label must be scored.
func CollapseInvasion(st *configs.Structures, findings []dataset.Finding) (map[string]int, error) {
	inv := make(map[string]int, len(st.List))
	for _, f := range findings {
		if _, ok := st.Get(f.Structure); !ok {
			return nil, fmt.Errorf("finding names unknown structure %q; add it to structures.yaml or fix the dataset", f.Structure)
		}
		if f.Invasion != 0 && f.Invasion != 1 {
			return nil, fmt.Errorf("finding %s has invasion %d; want 0 or 1", f.Structure, f.Invasion)
		}
		if f.Invasion == 1 || inv[f.Structure] == 0 {
			inv[f.Structure] = f.Invasion
		}
	}
	for _, id := range st.IDs() {
		if _, ok := inv[id]; !ok {
			return nil, fmt.Errorf("no invasion label for structure %s; every base structure needs one", id)
		}
	}
	return inv, nil
}

func groupImages(groups []dataset.PlaneGroup) ([]dataset.Image, []string) {
	imgs := make([]dataset.Image, len(groups))
	planes := make([]string, len(groups))
	for i, g := range groups {
		imgs[i], planes[i] = g.Image, g.Plane
	}
	return imgs, planes
}

func findFinding(p *dataset.Patient, structure, side string) (dataset.Finding, bool) {
	for _, f := range p.Structures {
		if f.Structure == structure && f.Side == side {
			return f, true
		}
	}
	return dataset.Finding{}, false
}

func hasOption(q dataset.CareQuestion, letter string) bool {
	for _, o := range q.Options {
		if o.Letter == letter {
			return true
		}
	}
	return false
}

func validLabel(v string, allowed ...string) bool { return slices.Contains(allowed, v) }

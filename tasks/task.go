package tasks

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Task describes one benchmark task: everything npcorch needs to build its
// items, render and send its requests, simulate its answers, score them and
// plan its work. A task is a value; a Registry holds a benchmark's tasks,
// and nothing outside the task's own descriptor names it.
type Task struct {
	// Key names the task everywhere: models.yaml and campaign files, item
	// ids ("KEY/PATIENT..."), journal files and score files.
	Key string
	// Level is the benchmark level the task belongs to ("L3", "L6").
	Level string
	// Title names the task in reports, as the paper does.
	Title string
	// Cohort is the dataset cohort whose patients the task's items come
	// from (dataset.Cohort*).
	Cohort string
	// Prompt is the name of the task's prompt template, without ".tmpl"
	// (Key when empty).
	Prompt string
	// Edition is the AJCC/UICC staging manual its prompt names
	// (PromptData.Edition; "eighth" when empty).
	Edition string
	// Images are the kinds of prepared image its items show
	// (dataset.Kind*): what prep must make for it, and which of prep's
	// failures leave an item without its images.
	Images []string
	// ImageLevel says that only models that read images answer the task
	// though its prompts show none and build on no image answer (the L6
	// controls with reference or no image findings: the paper asks L3 and
	// L6 of image-capable models only).
	ImageLevel bool
	// PerImage says that every image is an item of its own, so an image
	// prep could not make drops its item only, not the patient's others.
	PerImage bool
	// Build makes the task's items; Builder.Patients yields the patients
	// of its cohort whose images are there.
	Build func(b *Builder)
	// Answer extracts an item's closed answer, the label compared with
	// Gold.Label; nil when the answer is not one label (a structure card).
	Answer func(it Item, content string) extract.Label
	// Graded, for a task whose answer is not one label (Answer nil), are
	// the labels its answers are graded on in repeated-run reliability,
	// one row of the repeats table each (a structure card: its structure,
	// and its structure and invasion together). A task with neither has
	// no reliability.
	Graded []GradedField
	// Classes lists the answer categories in display order, for class
	// diagnostics and the majority baseline; nil when they differ from item
	// to item (a care question's options).
	Classes []string
	// ScoredAlone says the task is scored on its own (a TaskResult of
	// ModelResults.Tasks); otherwise only the composites that read it score
	// its answers.
	ScoredAlone bool
	// Control marks a matched control: the same items asked under changed
	// inputs, for a paired comparison with the task it varies. A campaign
	// runs it only when its task list names it (or a family holding it);
	// an empty task list leaves it out.
	Control bool
	// After lists the tasks whose answers the task's prompts may include
	// (the task itself for a serial conversation, whose later turns replay
	// the earlier ones); the runner sends their items first and keeps
	// their answers.
	After []string
	// Needs returns the ids of the items (of tasks in After, same patient)
	// whose answers, from the same model and repeat, an item's prompt
	// includes — for a serial conversation, those of Item.Earlier; nil
	// when it needs none.
	Needs func(it Item) []string
	// Prior writes the prior lines of every item's prompt (PromptData.Prior:
	// what it says of those answers, and what the item supplies), given
	// each needed item's record by item id; it is called for items that
	// need no answer too. Nil writes none.
	Prior func(it Item, answers map[string]*journal.Record) []string
	// Judges, on a judge task (O1's rubric judge), is the key of the task
	// whose answers it judges. A judge task has no Build: its items come
	// from the journal (JudgeItems, JudgeRetries), and its requests are
	// greedy (temperature 0, top-p 1) with the reasoning effort
	// JudgeEffort.
	Judges string
	// JudgeEffort is the reasoning_effort a judge task's requests ask
	// for ("" sends none).
	JudgeEffort string
	// Sim says how the simulated engine recognises and answers the task's
	// requests.
	Sim Sim
	// Paper is the task's request mix at the paper's scale, for `npcorch
	// plan` without a dataset (its Task is set from Key).
	Paper schedule.RequestMix
}

// GradedField is one label of an answer that repeated-run reliability
// grades: its name, the item's gold value and the label the answer gives
// (a failed extraction is wrong and never agrees).
type GradedField struct {
	Name   string
	Gold   func(it Item) string
	Answer func(it Item, content string) extract.Label
}

// Sim is how the simulated engine recognises a task's requests and what
// it answers (the entries of the sim key, package launcher/simkey).
type Sim struct {
	// Marker is a phrase of the task's prompt that tells its requests
	// apart from other tasks' requests showing the same images.
	Marker string
	// Recognise, when set, replaces Marker: the text that recognises an
	// item's requests, given its prompt rendered without prior findings.
	Recognise func(it Item, prompt string) string
	// Answers returns an item's right answer, its wrong ones and the
	// answer of the constant policy.
	Answers func(it Item) SimAnswers
	// More, when set, returns further entries an item adds to the sim key
	// (an O1 item's judge entries, one per criterion: the judge's requests
	// are made only once the answers exist, after the key is written).
	More func(it Item) []simkey.Item
}

// SimAnswers are the answers the simulated engine gives to one item: a
// closed answer (Right, Wrong), a free text composed of Parts, or for a
// judge's item a Verdict on whether its response says Claim.
type SimAnswers struct {
	Right    string
	Wrong    []string
	Constant string
	Parts    []simkey.Part
	Verdict  *simkey.Verdict
}

// promptName is the template the task renders.
func (t *Task) promptName() string {
	if t.Prompt != "" {
		return t.Prompt
	}
	return t.Key
}

// edition is the staging manual the task's prompt names.
func (t *Task) edition() string {
	if t.Edition != "" {
		return t.Edition
	}
	return "eighth"
}

// Builder collects the items a task's Build makes, and the problems of
// those it cannot make.
type Builder struct {
	task     *Task
	raw      *dataset.Raw
	prepared map[string]*dataset.PreparedPatient
	items    []Item
	problems []ItemProblem
	ids      map[string]bool
}

// ItemID is the id of an item of the task being built: "TASK/PATIENT",
// then the parts.
func (b *Builder) ItemID(patient string, parts ...string) string {
	return strings.Join(append([]string{b.task.Key, patient}, parts...), "/")
}

// Consultations are the dataset's O1 cases.
func (b *Builder) Consultations() []dataset.ConsultCase { return b.raw.Consultations }

// Add adds an item of the task being built and returns it as added (its
// Task set); an id already added is a problem, and the item is left out
// (the journal keys answers by id): ok is false then.
func (b *Builder) Add(it Item) (added Item, ok bool) {
	if b.ids[it.ID] {
		b.Problem(it.ID, "another item has the same id; give the dataset's items unique ids")
		return it, false
	}
	b.ids[it.ID] = true
	it.Task = b.task.Key
	b.items = append(b.items, it)
	return it, true
}

// Raw is the raw dataset, for tasks whose items are not patients of a
// cohort with prepared images (the text levels' sections).
func (b *Builder) Raw() *dataset.Raw { return b.raw }

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

package npcbench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
)

// CPCare is a CarePath care decision (L6, prompt A13): one question of the
// patient's episode, answered with an option letter, its prompt holding
// the model's OWN pathology and MRI findings (its cp_pathology and cp_mri
// answers) and the supplied reference fields. Prior care answers are not
// fed back. The paper: 217 decisions of 100 patients.
const CPCare = "cp_care"

func cpCare(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: CPCare, Level: "L6", Title: "CarePath care decisions (L6, A13)",
		Cohort: dataset.CohortCarePath,
		Build:  buildCare,
		Answer: answerCare,
		After:  []string{CPPathology, CPMRI},
		Needs:  careNeeds,
		Prior:  ownPrior(st),
		Sim:    tasks.Sim{Recognise: careText, Answers: careAnswers},
		Paper:  schedule.RequestMix{Requests: 217, TextTokens: 1500, MaxTokens: 1024},
	}
}

// ownPrior writes a care question's prior lines from the model's own
// pathology and MRI answers for the patient.
func ownPrior(st *configs.Structures) func(tasks.Item, map[string]*journal.Record) []string {
	return func(it tasks.Item, answers map[string]*journal.Record) []string {
		return PriorFindings(it.Care, ownFindings(st, answers[CPPathology+"/"+it.Patient], answers[CPMRI+"/"+it.Patient]))
	}
}

// buildCare makes one item per question of the patient's episode, its
// reference letter the gold answer.
func buildCare(b *tasks.Builder) {
	for p := range b.Patients() {
		if p.Episode == nil {
			b.Problem(b.ItemID(p.ID), "the carepath patient has no episode")
			continue
		}
		for i := range p.Episode.Questions {
			q := p.Episode.Questions[i]
			id := b.ItemID(p.ID, q.ID)
			if !slices.Contains(letters(&q), q.Answer) {
				b.Problem(id, fmt.Sprintf("reference answer %q is not one of the options", q.Answer))
				continue
			}
			b.Add(tasks.Item{ID: id, Patient: p.ID, Gold: tasks.Gold{Label: q.Answer}, Care: &q,
				Context: p.Episode.Context, Excluded: q.Excluded})
		}
	}
}

func letters(q *dataset.CareQuestion) []string {
	out := make([]string, len(q.Options))
	for i, o := range q.Options {
		out[i] = o.Letter
	}
	return out
}

func answerCare(it tasks.Item, content string) extract.Label {
	if it.Care == nil {
		return extract.Label{Failure: &extract.Failure{Kind: extract.Unparseable, Detail: "item " + it.ID + " has no care question"}}
	}
	return extract.Care(content, letters(it.Care))
}

// careNeeds: the pathology and MRI answers of the same patient, for the
// findings the question injects.
func careNeeds(it tasks.Item) []string {
	if it.Care == nil {
		return nil
	}
	var needs []string
	for _, inj := range it.Care.Inject {
		var id string
		switch inj {
		case dataset.InjectPathology:
			id = CPPathology + "/" + it.Patient
		case dataset.InjectTStage, dataset.InjectStructures:
			id = CPMRI + "/" + it.Patient
		}
		if id != "" && !slices.Contains(needs, id) {
			needs = append(needs, id)
		}
	}
	return needs
}

// careText recognises a care question's requests by its clinical part,
// which, unlike the prior findings, does not vary by model.
func careText(it tasks.Item, prompt string) string {
	if i := strings.Index(prompt, "Clinical information"); i >= 0 {
		return prompt[i:]
	}
	return it.Care.Question
}

// careAnswers: every other option is wrong; the constant policy picks the
// first option.
func careAnswers(it tasks.Item) tasks.SimAnswers {
	a := tasks.SimAnswers{Right: "Answer: " + it.Gold.Label, Constant: it.Care.Options[0].Letter}
	for _, o := range it.Care.Options {
		if o.Letter != it.Gold.Label {
			a.Wrong = append(a.Wrong, o.Letter)
		}
	}
	return a
}

// Findings are a model's own predictions for one CarePath patient, as
// extracted from its cp_pathology and cp_mri answers. Empty fields mean the
// model gave no valid answer; Invaded is nil then, empty for "none invaded".
type Findings struct {
	Pathology string
	TStage    string
	Invaded   []string
}

// ownFindings reads a model's own pathology, T stage and invaded
// structures from its cp_pathology and cp_mri records (either may be nil
// when the question needs only the other), by the same extraction that
// scores them. Nothing is guessed: an answer that does not parse leaves
// the finding empty, and the care prompt says "no valid answer".
func ownFindings(st *configs.Structures, pathology, mri *journal.Record) Findings {
	var f Findings
	if pathology != nil && pathology.Answer != nil {
		if l := extract.Pathology(pathology.Answer.Content); l.OK() {
			f.Pathology = l.Value
		}
	}
	if mri != nil && mri.Answer != nil {
		s := extract.TStaging(mri.Answer.Content, st)
		if s.TStage.OK() {
			f.TStage = s.TStage.Value
		}
		if stagingParsed(s) {
			f.Invaded = append([]string{}, s.Invaded()...)
		}
	}
	return f
}

// stagingParsed reports whether any invasion label was read, so that "no
// structure invaded" is told apart from "no answer".
func stagingParsed(s extract.Staging) bool {
	for _, l := range s.Invasion {
		if l.OK() {
			return true
		}
	}
	return false
}

// PriorFindings writes a care question's "Prior diagnostic findings": the
// model's own predictions for what the question injects (nil findings are
// reported as unavailable, never guessed) and the supplied reference fields.
func PriorFindings(q *dataset.CareQuestion, f Findings) []string {
	var out []string
	for _, inj := range q.Inject {
		switch inj {
		case dataset.InjectPathology:
			out = append(out, pathologyFinding(f.Pathology))
		case dataset.InjectTStage:
			out = append(out, "MRI T stage (model prediction): "+orNoAnswer(f.TStage))
		case dataset.InjectStructures:
			out = append(out, invadedFinding(f.Invaded))
		}
	}
	for _, s := range q.Supplied {
		out = append(out, s.Field+": "+s.Value)
	}
	return out
}

func pathologyFinding(p string) string { return "Pathology (model prediction): " + pathologyValue(p) }

// pathologyValue says what a pathology label means; "" is no valid answer.
func pathologyValue(p string) string {
	switch p {
	case "1":
		return "1, supports nasopharyngeal carcinoma"
	case "0":
		return "0, does not support nasopharyngeal carcinoma"
	}
	return "no valid answer"
}

func invadedFinding(invaded []string) string {
	return "Invaded structures (model prediction): " + invadedValue(invaded)
}

// invadedValue lists invaded structures; nil is no valid answer, empty
// none invaded.
func invadedValue(invaded []string) string {
	switch {
	case invaded == nil:
		return "no valid answer"
	case len(invaded) == 0:
		return "none"
	}
	return strings.Join(invaded, ", ")
}

func orNoAnswer(v string) string {
	if v == "" {
		return "no valid answer"
	}
	return v
}

package tasks

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/score"
)

// ResultsFormat tags scores.json.
const ResultsFormat = "npcorch-scores/1"

// Results are every score of a run, recomputed from the journal and the
// dataset alone. The same journal and dataset give the same bytes.
type Results struct {
	Format   string         `json:"format"`
	Campaign string         `json:"campaign"`
	Options  score.Options  `json:"options"`
	Repeats  int            `json:"repeats"`
	Models   []ModelResults `json:"models"`
	// JournalProblems are the journal lines scoring could not use as
	// written; absent for a clean journal, so its score files do not change.
	JournalProblems *JournalReport `json:"journal_problems,omitempty"`
}

// JournalReport is a journal's problems as the score files carry them.
type JournalReport struct {
	// Counts holds how many problems there are of each kind, by kind.
	Counts []ProblemCount `json:"counts"`
	// Problems lists each, in file and line order.
	Problems []JournalProblem `json:"problems"`
}

// ProblemCount counts the journal problems of one kind.
type ProblemCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// newJournalReport counts problems; nil when there are none.
func newJournalReport(problems []JournalProblem) *JournalReport {
	if len(problems) == 0 {
		return nil
	}
	counts := map[string]int{}
	for _, p := range problems {
		counts[p.Kind]++
	}
	r := &JournalReport{Problems: problems}
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		r.Counts = append(r.Counts, ProblemCount{Kind: kind, Count: counts[kind]})
	}
	return r
}

// Summary is the counts in words: "2 problems (1 torn_line, 1 unknown_model)".
func (r *JournalReport) Summary() string {
	parts := make([]string, len(r.Counts))
	for i, c := range r.Counts {
		parts[i] = fmt.Sprintf("%d %s", c.Count, c.Kind)
	}
	return fmt.Sprintf("%d problem(s) (%s)", len(r.Problems), strings.Join(parts, ", "))
}

// ModelResults are one model's scores.
type ModelResults struct {
	Model string `json:"model"`
	// Answered, NotRun and Missing count (item, repeat) pairs: answered in
	// the journal, failed for infrastructure reasons, never attempted.
	Answered int `json:"answered"`
	NotRun   int `json:"not_run"`
	Missing  int `json:"missing"`
	// Tasks holds the closed-answer scores of each L3 task that ran.
	Tasks []TaskResult `json:"tasks"`
	// TStage is T staging over both presentations (the paper's T400).
	TStage *score.TaskScore `json:"t_stage,omitempty"`
	// Evidence holds the anatomical-panel diagnostics (cards and A8).
	Evidence *score.EvidenceScore `json:"evidence,omitempty"`
	// CarePath holds the L6 scores.
	CarePath *score.CarePathScore `json:"carepath,omitempty"`
	// Reliability holds repeated-run measures per task (repeats > 1).
	Reliability []TaskReliability `json:"reliability,omitempty"`
}

// TaskResult is one task's score.
type TaskResult struct {
	Task  string          `json:"task"`
	Score score.TaskScore `json:"score"`
}

// TaskReliability is one task's repeated-run reliability.
type TaskReliability struct {
	Task        string            `json:"task"`
	Reliability score.Reliability `json:"reliability"`
}

// ScoreRun scores every model of a run. items are the campaign's items (from
// BuildItems), models the model names in campaign order.
func ScoreRun(campaign string, raw *dataset.Raw, items []Item, st *configs.Structures, j *JournalState,
	models []string, repeats int, opt score.Options) (*Results, error) {
	if repeats < 1 {
		repeats = 1
	}
	res := &Results{Format: ResultsFormat, Campaign: campaign, Options: opt, Repeats: repeats,
		JournalProblems: newJournalReport(j.Check(items, models, repeats))}
	idx := indexAnswers(j)
	patients := map[string]*dataset.Patient{}
	for i := range raw.Patients {
		patients[raw.Patients[i].ID] = &raw.Patients[i]
	}
	for _, m := range models {
		mr, err := scoreModel(m, items, patients, st, idx, repeats, opt)
		if err != nil {
			return nil, fmt.Errorf("score %s: %w", m, err)
		}
		res.Models = append(res.Models, *mr)
	}
	return res, nil
}

type answerIndex struct {
	answered map[itemRepeat]Record
	notRun   map[itemRepeat]bool
}

// indexAnswers picks, for each (model, item, repeat), the answered record
// that counts: the latest-started one when a prompt change re-asked it.
func indexAnswers(j *JournalState) answerIndex {
	idx := answerIndex{answered: map[itemRepeat]Record{}, notRun: map[itemRepeat]bool{}}
	for _, rec := range j.Sorted() {
		k := itemRepeat{rec.Model, rec.Item, rec.Repeat}
		if rec.Status != StatusAnswered {
			idx.notRun[k] = true
			continue
		}
		old, ok := idx.answered[k]
		if !ok || later(rec, old) {
			idx.answered[k] = rec
		}
	}
	return idx
}

func later(a, b Record) bool {
	if a.Answer.Timing.Started != b.Answer.Timing.Started {
		return a.Answer.Timing.Started > b.Answer.Timing.Started
	}
	return a.Key > b.Key
}

// outcome is one (item, repeat) as the scorer sees it.
type outcome struct {
	rec    *Record
	notRun bool
}

func (o outcome) content() string {
	if o.rec == nil || o.rec.Answer == nil {
		return ""
	}
	return o.rec.Answer.Content
}

func scoreModel(model string, items []Item, patients map[string]*dataset.Patient, st *configs.Structures,
	idx answerIndex, repeats int, opt score.Options) (*ModelResults, error) {
	mr := &ModelResults{Model: model}
	get := func(it Item, rep int) outcome {
		k := itemRepeat{model, it.ID, rep}
		if rec, ok := idx.answered[k]; ok {
			return outcome{rec: &rec}
		}
		return outcome{notRun: true}
	}
	byTask := map[string][]Item{}
	for _, it := range items {
		byTask[it.Task] = append(byTask[it.Task], it)
		for rep := 0; rep < repeats; rep++ {
			k := itemRepeat{model, it.ID, rep}
			switch {
			case idx.answered[k].Key != "":
				mr.Answered++
			case idx.notRun[k]:
				mr.NotRun++
			default:
				mr.Missing++
			}
		}
	}
	// Closed-answer L3 tasks.
	var tUnits []score.Unit
	for _, task := range []string{configs.TaskPathology, configs.TaskSequence, configs.TaskTCards, configs.TaskTGroups, configs.TaskNGroups} {
		its := byTask[task]
		if len(its) == 0 {
			continue
		}
		units := make([]score.Unit, len(its))
		for i, it := range its {
			o := get(it, 0)
			units[i] = score.Unit{Patient: it.Patient, Item: it.ID, Gold: it.Gold.Label, Pred: predictLabel(task, o.content(), st), NotRun: o.notRun}
		}
		ts, err := score.Classify(units, classesOf(task), opt)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", task, err)
		}
		mr.Tasks = append(mr.Tasks, TaskResult{Task: task, Score: ts})
		if task == configs.TaskTCards || task == configs.TaskTGroups {
			tUnits = append(tUnits, units...)
		}
	}
	if len(tUnits) > 0 {
		ts, err := score.Classify(tUnits, score.TClasses(), opt)
		if err != nil {
			return nil, fmt.Errorf("T stage: %w", err)
		}
		mr.TStage = &ts
	}
	if ev, err := scoreEvidence(byTask, patients, st, get, opt); err != nil {
		return nil, err
	} else if ev != nil {
		mr.Evidence = ev
	}
	if cp, err := scoreCarePath(byTask, get, st, opt); err != nil {
		return nil, err
	} else if cp != nil {
		mr.CarePath = cp
	}
	if repeats > 1 {
		for _, task := range configs.TaskKeys {
			its := byTask[task]
			if len(its) == 0 || task == configs.TaskCard {
				continue
			}
			var ri []score.RepeatedItem
			for _, it := range its {
				if it.Excluded {
					continue
				}
				r := score.RepeatedItem{Patient: it.Patient, Item: it.ID, Gold: it.Gold.Label}
				for rep := 0; rep < repeats; rep++ {
					o := get(it, rep)
					r.Attempts = append(r.Attempts, score.Attempt{Pred: predictItem(it, o.content(), st), NotRun: o.notRun})
				}
				ri = append(ri, r)
			}
			rel, err := score.Repeated(ri, opt)
			if err != nil {
				return nil, fmt.Errorf("task %s reliability: %w", task, err)
			}
			mr.Reliability = append(mr.Reliability, TaskReliability{Task: task, Reliability: rel})
		}
	}
	return mr, nil
}

func scoreEvidence(byTask map[string][]Item, patients map[string]*dataset.Patient, st *configs.Structures,
	get func(Item, int) outcome, opt score.Options) (*score.EvidenceScore, error) {
	cards, staging := byTask[configs.TaskCard], byTask[configs.TaskTCards]
	if len(cards) == 0 && len(staging) == 0 {
		return nil, nil
	}
	byPatient := map[string]*score.PanelPatient{}
	var order []string
	panel := func(id string) (*score.PanelPatient, error) {
		if pp, ok := byPatient[id]; ok {
			return pp, nil
		}
		p, ok := patients[id]
		if !ok {
			return nil, fmt.Errorf("patient %s is not in the dataset", id)
		}
		pp := &score.PanelPatient{Patient: id, TStage: p.TStage}
		for _, f := range p.Structures {
			pp.Findings = append(pp.Findings, score.Finding{Structure: f.Structure, Side: f.Side, Invasion: f.Invasion})
		}
		byPatient[id] = pp
		order = append(order, id)
		return pp, nil
	}
	for _, it := range cards {
		pp, err := panel(it.Patient)
		if err != nil {
			return nil, err
		}
		o := get(it, 0)
		pp.Cards = append(pp.Cards, score.CardUnit{Item: it.ID,
			Gold:   score.Finding{Structure: it.Gold.Structure, Side: it.Gold.Side, Invasion: it.Gold.Invasion},
			Pred:   extract.StructureCard(o.content(), st),
			NotRun: o.notRun})
	}
	for _, it := range staging {
		pp, err := panel(it.Patient)
		if err != nil {
			return nil, err
		}
		o := get(it, 0)
		pp.Staging = &score.StagingUnit{Pred: extract.TStaging(o.content(), st), NotRun: o.notRun}
	}
	sort.Strings(order)
	list := make([]score.PanelPatient, len(order))
	for i, id := range order {
		list[i] = *byPatient[id]
	}
	ev, err := score.Evidence(list, st, opt)
	if err != nil {
		return nil, fmt.Errorf("anatomical panel: %w", err)
	}
	return &ev, nil
}

func scoreCarePath(byTask map[string][]Item, get func(Item, int) outcome, st *configs.Structures, opt score.Options) (*score.CarePathScore, error) {
	path, mri, care := byTask[configs.TaskCPPathology], byTask[configs.TaskCPMRI], byTask[configs.TaskCPCare]
	if len(path)+len(mri)+len(care) == 0 {
		return nil, nil
	}
	eps := map[string]*score.Episode{}
	var order []string
	ep := func(id string) *score.Episode {
		if e, ok := eps[id]; ok {
			return e
		}
		e := &score.Episode{Patient: id}
		eps[id] = e
		order = append(order, id)
		return e
	}
	unit := func(it Item) score.Unit {
		o := get(it, 0)
		return score.Unit{Patient: it.Patient, Item: it.ID, Gold: it.Gold.Label, Pred: predictItem(it, o.content(), st),
			NotRun: o.notRun, Excluded: it.Excluded}
	}
	for _, it := range path {
		ep(it.Patient).Pathology = unit(it)
	}
	for _, it := range mri {
		ep(it.Patient).TStage = unit(it)
	}
	for _, it := range care {
		e := ep(it.Patient)
		e.Care = append(e.Care, unit(it))
	}
	sort.Strings(order)
	list := make([]score.Episode, len(order))
	for i, id := range order {
		list[i] = *eps[id]
	}
	cp, err := score.CarePath(list, opt)
	if err != nil {
		return nil, fmt.Errorf("carepath: %w", err)
	}
	return &cp, nil
}

// predictItem extracts an item's predicted label (its closed answer).
func predictItem(it Item, content string, st *configs.Structures) extract.Label {
	if it.Task == configs.TaskCPCare && it.Care != nil {
		letters := make([]string, len(it.Care.Options))
		for i, o := range it.Care.Options {
			letters[i] = o.Letter
		}
		return extract.Care(content, letters)
	}
	return predictLabel(it.Task, content, st)
}

func predictLabel(task, content string, st *configs.Structures) extract.Label {
	switch task {
	case configs.TaskPathology, configs.TaskCPPathology:
		return extract.Pathology(content)
	case configs.TaskSequence:
		return extract.Sequence(content, imaging.Sequences)
	case configs.TaskTCards, configs.TaskTGroups, configs.TaskCPMRI:
		return extract.TStaging(content, st).TStage
	case configs.TaskNGroups:
		return extract.NStage(content).NStage
	case configs.TaskCard:
		return extract.StructureCard(content, st).Structure
	}
	return extract.Label{Failure: &extract.Failure{Kind: extract.Unparseable, Detail: "unknown task " + task}}
}

func classesOf(task string) []string {
	switch task {
	case configs.TaskPathology, configs.TaskCPPathology:
		return score.PathologyClasses()
	case configs.TaskSequence:
		return imaging.Sequences
	case configs.TaskTCards, configs.TaskTGroups, configs.TaskCPMRI:
		return score.TClasses()
	case configs.TaskNGroups:
		return score.NClasses()
	}
	return nil
}

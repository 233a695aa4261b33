package tasks

import (
	"fmt"
	"maps"
	"slices"

	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/score"
)

// judgesOf lists, per judge task of reg, the models that journalled its
// records, sorted.
func judgesOf(reg *Registry, j *journal.State) map[string][]string {
	seen := map[string]map[string]bool{}
	for _, rec := range j.Records {
		if t := reg.Lookup(rec.Task); t != nil && t.Judges != "" {
			if seen[rec.Task] == nil {
				seen[rec.Task] = map[string]bool{}
			}
			seen[rec.Task][rec.Model] = true
		}
	}
	out := map[string][]string{}
	for task, models := range seen {
		out[task] = slices.Sorted(maps.Keys(models))
	}
	return out
}

// Judges returns the models that judged the answers of a task in the
// journal, sorted, and the judge task's key.
func (a *Answers) Judges(task string) (judgeTask string, judges []string) {
	for _, t := range a.reg.b.Tasks {
		if t.Judges == task {
			return t.Key, a.judges[t.Key]
		}
	}
	return "", nil
}

// Judged is the model's response to a consultation item as a judge saw
// it: every criterion with its verdict, or why it has none.
func (a *Answers) Judged(judgeTask, judge string, it Item) score.JudgedItem {
	c := it.Consult
	ji := score.JudgedItem{Case: c.CaseID, Item: it.ID, Tags: c.Tags}
	for _, cr := range c.Criteria {
		if cr.Positive() {
			ji.Points += cr.Weight
		}
	}
	if _, notRun := a.Content(it); notRun {
		ji.Missing = "the consultation was not answered"
	}
	for _, cr := range c.Criteria {
		jc := score.JudgedCriterion{ID: cr.ID, Kind: cr.Kind, Section: cr.Section, Weight: cr.Weight}
		v, why := a.verdict(judgeTask, judge, Judged{Generator: a.model, Item: it.ID, Criterion: cr})
		jc.Met, jc.Invalid = v.Met, why
		ji.Criteria = append(ji.Criteria, jc)
	}
	return ji
}

// verdict is a judge's verdict on one (response, criterion): the one of
// the highest rung it answered; why says why there is no valid one.
func (a *Answers) verdict(judgeTask, judge string, j Judged) (extract.Verdict, string) {
	last := len(JudgeAttempts()) - 1
	for j.Attempt = last; j.Attempt >= 0; j.Attempt-- {
		rec, ok := a.idx.answered[itemRepeat{judge, JudgeItemID(judgeTask, &j), 0}]
		if !ok {
			continue
		}
		v := extract.JudgeVerdict(rec.Answer.Content)
		if !v.OK() {
			return v, fmt.Sprintf("no valid verdict after %d attempt(s) (%s)", j.Attempt+1, v.Failure.Kind)
		}
		return v, ""
	}
	if a.idx.notRun[itemRepeat{judge, JudgeItemID(judgeTask, &j), 0}] {
		return extract.Verdict{}, "the judge's request was not run"
	}
	return extract.Verdict{}, "not judged"
}

// calibrate measures each judge of each judge task against the physician
// labels of the audit responses of the items it judges (Eq. A9).
func calibrate(reg *Registry, items []Item, idx answerIndex, judges map[string][]string, opt score.Options) ([]JudgeResults, error) {
	var out []JudgeResults
	for _, t := range reg.b.Tasks {
		for _, judge := range judges[t.Key] {
			a := &Answers{idx: idx}
			var pairs []score.LabelPair
			for _, it := range items {
				if it.Task != t.Judges || it.Consult == nil {
					continue
				}
				for _, au := range it.Consult.Audit {
					for _, l := range au.Labels {
						cr, ok := findCriterion(it.Consult, l.Criterion)
						if !ok {
							continue
						}
						v, why := a.verdict(t.Key, judge, Judged{Generator: AuditGenerator, Audit: au.ID, Item: it.ID, Criterion: cr})
						pairs = append(pairs, score.LabelPair{Response: au.ID, Criterion: it.ID + "/" + cr.ID, Kind: cr.Kind,
							Physician: l.Met, Judge: v.Met, Invalid: why})
					}
				}
			}
			if len(pairs) == 0 {
				continue
			}
			c, err := score.Calibrate(pairs, opt)
			if err != nil {
				return nil, fmt.Errorf("calibrate judge %s (%s): %w", judge, t.Key, err)
			}
			out = append(out, JudgeResults{Task: t.Key, Judge: judge, Calibration: &c})
		}
	}
	return out, nil
}

func findCriterion(c *Consult, id string) (dataset.Criterion, bool) {
	for _, x := range c.Criteria {
		if x.ID == id {
			return x, true
		}
	}
	return dataset.Criterion{}, false
}

// judgeCheckItems are every judge item the journal may hold for items: each
// (response, criterion) at each rung, so that the journal's check knows
// the judges' records.
func judgeCheckItems(reg *Registry, items []Item, j *journal.State, generators []string) []Item {
	var out []Item
	for _, t := range reg.b.Tasks {
		if t.Judges == "" {
			continue
		}
		for _, it := range JudgeItems(t, items, j, generators) {
			for rung := range JudgeAttempts() {
				next := *it.Consult.Judged
				next.Attempt = rung
				out = append(out, Item{ID: JudgeItemID(t.Key, &next), Task: t.Key, Patient: it.Patient})
			}
		}
	}
	return out
}

// JudgeResults are one judge's calibration against the physicians.
type JudgeResults struct {
	Task        string             `json:"task"`
	Judge       string             `json:"judge"`
	Calibration *score.Calibration `json:"calibration,omitempty"`
}

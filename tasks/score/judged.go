package score

import (
	"fmt"
	"maps"
	"slices"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/judge"
)

// judgesOf lists, per judge task of reg, the models that journalled its
// records, sorted.
func judgesOf(reg *tasks.Registry, j *journal.State) map[string][]string {
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
	for _, t := range a.reg.Tasks() {
		if t.Judges == task {
			return t.Key, a.judges[t.Key]
		}
	}
	return "", nil
}

// Judged is the model's response to a consultation item as a judge saw
// it: every criterion with its verdict, or why it has none.
func (a *Answers) Judged(judgeTask, judgeModel string, it tasks.Item) JudgedItem {
	c := it.Consult
	ji := JudgedItem{Case: c.CaseID, Item: it.ID, Tags: c.Tags}
	for _, cr := range c.Criteria {
		if cr.Positive() {
			ji.Points += cr.Weight
		}
	}
	if _, notRun := a.Content(it); notRun {
		ji.Missing = "the consultation was not answered"
	}
	for _, cr := range c.Criteria {
		jc := JudgedCriterion{ID: cr.ID, Kind: cr.Kind, Section: cr.Section, Weight: cr.Weight}
		v, why := judge.Verdict(a.idx, judgeTask, judgeModel, tasks.Judged{Generator: a.model, Item: it.ID, Criterion: cr})
		jc.Met, jc.Invalid = v.Met, why
		ji.Criteria = append(ji.Criteria, jc)
	}
	return ji
}

// calibrate measures each judge of each judge task against the physician
// labels of the audit responses of the items it judges (Eq. A9).
func calibrate(reg *tasks.Registry, items []tasks.Item, idx journal.Outcomes, judges map[string][]string, opt Options) ([]JudgeResults, error) {
	var out []JudgeResults
	for _, t := range reg.Tasks() {
		for _, judgeModel := range judges[t.Key] {
			a := &Answers{idx: idx}
			var pairs []LabelPair
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
						v, why := judge.Verdict(a.idx, t.Key, judgeModel, tasks.Judged{Generator: judge.AuditGenerator, Audit: au.ID, Item: it.ID, Criterion: cr})
						pairs = append(pairs, LabelPair{Response: au.ID, Criterion: it.ID + "/" + cr.ID, Kind: cr.Kind,
							Physician: l.Met, Judge: v.Met, Invalid: why})
					}
				}
			}
			if len(pairs) == 0 {
				continue
			}
			c, err := Calibrate(pairs, opt)
			if err != nil {
				return nil, fmt.Errorf("calibrate judge %s (%s): %w", judgeModel, t.Key, err)
			}
			out = append(out, JudgeResults{Task: t.Key, Judge: judgeModel, Calibration: &c})
		}
	}
	return out, nil
}

func findCriterion(c *tasks.Consult, id string) (dataset.Criterion, bool) {
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
func judgeCheckItems(reg *tasks.Registry, items []tasks.Item, j *journal.State, generators []string) []tasks.Item {
	var out []tasks.Item
	for _, t := range reg.Tasks() {
		if t.Judges == "" {
			continue
		}
		for _, it := range judge.Items(t, items, j, generators) {
			for rung := range tasks.JudgeAttempts() {
				next := *it.Consult.Judged
				next.Attempt = rung
				out = append(out, tasks.Item{ID: judge.ItemID(t.Key, &next), Task: t.Key, Patient: it.Patient})
			}
		}
	}
	return out
}

package judge

import (
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
)

// AuditGenerator is the Generator of a physician-labelled response.
const AuditGenerator = "physician-audit"

// ItemID is the id of the judge's item for a response and criterion
// at an attempt: "JUDGETASK/GENERATOR/ITEM-WITHOUT-ITS-TASK/CRITERION",
// with "#retryN" for attempt N > 0.
func ItemID(judgeTask string, j *tasks.Judged) string {
	gen := j.Generator
	if j.Audit != "" {
		gen += "/" + j.Audit
	}
	_, rest, _ := strings.Cut(j.Item, "/")
	id := strings.Join([]string{judgeTask, gen, rest, j.Criterion.ID}, "/")
	if j.Attempt > 0 {
		id += "#retry" + strconv.Itoa(j.Attempt)
	}
	return id
}

// item is the judge's item of a response to gen and one criterion.
func item(judgeTask string, gen tasks.Item, j tasks.Judged) tasks.Item {
	c := *gen.Consult
	c.Criteria, c.Audit, c.Judged = nil, nil, &j
	return tasks.Item{ID: ItemID(judgeTask, &j), Task: judgeTask, Patient: gen.Patient, Consult: &c}
}

// Items are the first-attempt items of a judge task: for each
// generation item of the task it judges, each physician-labelled
// response, and each generator's answered response (repeat 0) in the
// journal, one item per criterion. Generation items without an answer
// yet have none.
func Items(judge *tasks.Task, items []tasks.Item, st *journal.State, generators []string) []tasks.Item {
	idx := st.Outcomes()
	var out []tasks.Item
	for _, it := range items {
		if it.Task != judge.Judges || it.Consult == nil {
			continue
		}
		var responses []tasks.Judged
		for _, a := range it.Consult.Audit {
			responses = append(responses, tasks.Judged{Generator: AuditGenerator, Audit: a.ID, Response: a.Response})
		}
		for _, g := range generators {
			if rec, ok := idx.Answered(g, it.ID, 0); ok {
				responses = append(responses, tasks.Judged{Generator: g, Response: rec.Answer.Content})
			}
		}
		for _, r := range responses {
			for _, c := range it.Consult.Criteria {
				j := r
				j.Item, j.Criterion = it.ID, c
				out = append(out, item(judge.Key, it, j))
			}
		}
	}
	return out
}

// Retries are the next attempts of the judge's items whose verdict,
// journalled by the judge model, could not be read: the same item one
// rung up JudgeAttempts. An item not answered (yet), or already at the
// last rung, has none; a verdict still unreadable there is kept as such.
func Retries(judgeItems []tasks.Item, st *journal.State, judge string) []tasks.Item {
	idx := st.Outcomes()
	last := len(tasks.JudgeAttempts()) - 1
	var out []tasks.Item
	for _, it := range judgeItems {
		j := it.Consult.Judged
		rec, ok := idx.Answered(judge, it.ID, 0)
		if !ok || j.Attempt >= last || extract.JudgeVerdict(rec.Answer.Content).OK() {
			continue
		}
		next := *j
		next.Attempt++
		c := *it.Consult
		c.Judged = &next
		out = append(out, tasks.Item{ID: ItemID(it.Task, &next), Task: it.Task, Patient: it.Patient, Consult: &c})
	}
	return out
}

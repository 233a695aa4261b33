package judge

import (
	"fmt"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Verdict is a judge model's verdict in the journal on one (response,
// criterion): the one of the highest rung of tasks.JudgeAttempts it
// answered; why says why there is no valid one (unreadable at its last
// rung, not run, or not judged).
func Verdict(o journal.Outcomes, judgeTask, judgeModel string, j tasks.Judged) (v extract.Verdict, why string) {
	last := len(tasks.JudgeAttempts()) - 1
	for j.Attempt = last; j.Attempt >= 0; j.Attempt-- {
		rec, ok := o.Answered(judgeModel, ItemID(judgeTask, &j), 0)
		if !ok {
			continue
		}
		v := extract.JudgeVerdict(rec.Answer.Content)
		if !v.OK() {
			return v, fmt.Sprintf("no valid verdict after %d attempt(s) (%s)", j.Attempt+1, v.Failure.Kind)
		}
		return v, ""
	}
	if o.NotRun(judgeModel, ItemID(judgeTask, &j), 0) {
		return extract.Verdict{}, "the judge's request was not run"
	}
	return extract.Verdict{}, "not judged"
}

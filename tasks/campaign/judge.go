package campaign

import (
	"context"
	"fmt"
	"slices"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/judge"
	"github.com/npcorch/npcorch/tasks/send"
)

// The judge phase: each of the campaign's judges judges the generators'
// answers of the task its judge task judges (O1's consultations). To the
// scheduler a judge is a model like any other whose work needs the
// generators' answers (schedule.Config.After); to the loop its runner is
// a judging one: it judges what the journal holds, waits for the next
// generator to end, and judges again, until every generator has ended.

// judgeTask is the registry's judge task whose judged task has items in
// the campaign, nil when none has.
func (d *driver) judgeTask() *tasks.Task { return judgeTaskOf(d.reg, d.items) }

// judgeTaskOf is reg's judge task whose judged task has items, nil when
// none has.
func judgeTaskOf(reg *tasks.Registry, items []tasks.Item) *tasks.Task {
	for _, t := range reg.Tasks() {
		if t.Judges == "" {
			continue
		}
		for _, it := range items {
			if it.Task == t.Judges {
				return t
			}
		}
	}
	return nil
}

// resolveJudges keeps the campaign's judges, each asked only its judge
// task, a simulated one given the judge's entries of the answer key; and
// notes, for the scheduler, the generators each waits for.
func (d *driver) resolveJudges(prompts *tasks.Prompts) error {
	c := d.opt.Campaign
	jt := d.judgeTask()
	if len(c.ResolvedJudges) == 0 {
		return nil
	}
	if jt == nil {
		return fmt.Errorf("campaign %s: judges are listed, but no task they judge has items: add o1 to tasks and consultations to the dataset", c.Name)
	}
	d.after = JudgeAfter(c)
	for _, m := range c.ResolvedJudges {
		m.Tasks = map[string]configs.TaskSettings{jt.Key: m.Tasks[jt.Key]}
		m.Engine.Sim = slices.Clone(m.Engine.Sim)
		if err := d.giveSimKey(&m, prompts, judgedItems(d.items, jt)); err != nil {
			return err
		}
		d.models[m.Name] = m
	}
	return nil
}

// judgedItems yields the campaign's items of the task jt judges.
func judgedItems(items []tasks.Item, jt *tasks.Task) func(func(tasks.Item) bool) {
	return func(yield func(tasks.Item) bool) {
		for _, it := range items {
			if it.Task == jt.Judges && !yield(it) {
				return
			}
		}
	}
}

// judgeWorkload estimates a judge's work: one request per criterion of
// each judged item, for each generator and each physician-labelled
// response; the prompt is the item's case, question and rubric line with
// a response of the generators' output budget; the output its budget.
func judgeWorkload(items []tasks.Item, generators []configs.Model, judge configs.Model, jt *tasks.Task) schedule.Workload {
	w := schedule.Workload{Model: judge.Name, Task: jt.Key}
	for it := range judgedItems(items, jt) {
		c := it.Consult
		if c == nil {
			continue
		}
		base := int64(len(c.Case)+len(c.Question))/4 + 900
		for _, g := range generators {
			w.Requests += len(c.Criteria)
			w.PromptTokens += int64(len(c.Criteria)) * (base + int64(g.Tasks[jt.Judges].MaxTokens))
		}
		n := int64(len(c.Criteria) * len(c.Audit))
		w.Requests += int(n)
		w.PromptTokens += n * (base + 500)
	}
	w.OutputTokens = int64(w.Requests) * int64(judge.Tasks[jt.Key].MaxTokens)
	return w
}

// JudgeAfter is, by judge, the models whose answers it judges: every
// generator of the campaign (schedule.Config.After).
func JudgeAfter(c *configs.Campaign) map[string][]string {
	if len(c.ResolvedJudges) == 0 {
		return nil
	}
	out := map[string][]string{}
	for _, j := range c.ResolvedJudges {
		for _, g := range c.Resolved {
			out[j.Name] = append(out[j.Name], g.Name)
		}
	}
	return out
}

// isJudge reports whether model is one of the campaign's judges.
func (d *driver) isJudge(model string) bool {
	_, ok := d.after[model]
	return ok
}

// startJudge runs a judge until every generator has ended: a pass over
// the answers in the journal, then another each time the loop says a
// generator ended (left: how many are still to end), and a last one once
// none is left. Its end is reported as a ran message.
func (l *loop) startJudge(m configs.Model, pool *inference.Pool, external bool) {
	jt := l.d.judgeTask()
	if jt == nil {
		l.post(ran{model: m.Name, external: external, err: fmt.Errorf("judge %s: the runner cannot judge", m.Name)})
		return
	}
	left := make(chan int, 1)
	l.judges[m.Name] = left
	left <- l.generatorsLeft()
	jd := judge.Judging{Task: jt, Items: l.d.items, Generators: l.d.after[m.Name],
		Read: func() (*journal.State, error) { return journal.Read(l.d.runDir) }}
	mr := send.ModelRun{Model: m, Builder: l.d.builder(m), Pool: pool, Repeats: 1, OnRecord: l.onRecord}
	go func() {
		sum, err := judgePasses(l.ctx, left, func() (send.Summary, error) { return judge.Run(l.ctx, l.d.runner, mr, jd) })
		sum.Model = m.Name
		l.post(ran{model: m.Name, external: external, sum: sum, err: err})
	}()
}

// judgePasses runs pass each time left says how many generators are
// still to end, until a pass after none is left, a pass fails or ctx ends.
// The total counts each judgment once: a pass lists every judgment of the
// answers in the journal, so what a later pass skips, an earlier one
// counted (the first as already in the journal, the others as made by
// this run: only this judge journals its judgments), and a judgment made
// in this run is never reported as already in the journal.
func judgePasses(ctx context.Context, left <-chan int, pass func() (send.Summary, error)) (send.Summary, error) {
	var total send.Summary
	for first := true; ; first = false {
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case n := <-left:
			s, err := pass()
			if !first {
				s.Requests -= s.Skipped
				s.Skipped = 0
			}
			total = total.Add(s)
			if err != nil || n == 0 {
				return total, err
			}
		}
	}
}

// generatorsLeft counts the generators whose runner has not ended.
func (l *loop) generatorsLeft() int {
	n := 0
	for _, m := range l.d.opt.Campaign.Resolved {
		if _, ended := l.sums[m.Name]; !ended {
			n++
		}
	}
	return n
}

// wakeJudges tells each judge how many generators are left, after one
// ended; a judge busy with a pass hears the latest count when it is done.
func (l *loop) wakeJudges() {
	n := l.generatorsLeft()
	for _, left := range l.judges {
		select {
		case <-left:
		default:
		}
		left <- n
	}
}

// localAfter is the scheduler's After: each judge's generators among the
// models it schedules (an external generator's answers come beside the
// schedule; its judges wait for them in their runner).
func (d *driver) localAfter(local []configs.Model) map[string][]string {
	if len(d.after) == 0 {
		return nil
	}
	in := map[string]bool{}
	for _, m := range local {
		in[m.Name] = true
	}
	out := map[string][]string{}
	for judge, gens := range d.after {
		if !in[judge] {
			continue
		}
		for _, g := range gens {
			if in[g] {
				out[judge] = append(out[judge], g)
			}
		}
	}
	return out
}

package tasks

import (
	"context"
	"fmt"

	"github.com/npcorch/npcorch/tasks/journal"
)

// Judging is one judge model's phase over generators' answers: the judge
// task, the run's items (those of the task it judges among them), the
// generators whose answers it judges, and the journal as written so far.
type Judging struct {
	Task       *Task
	Items      []Item
	Generators []string
	// Read returns the journal as written so far (ReadJournal of the
	// run's folder).
	Read func() (*journal.State, error)
}

// Judge runs a judge model over the answers the journal holds: the
// first attempt of every (answer, criterion) not judged yet, then, rung by
// rung of JudgeAttempts, the retries of the verdicts that could not be
// read. Each attempt is journalled as the judge model's record of its
// own item; a verdict unreadable at the last rung is kept as it is. It
// returns the summed summary of the rungs. Judging again later picks up
// answers written since (answered judgments are skipped by their keys).
func (r *Runner) Judge(ctx context.Context, mr ModelRun, jd Judging) (Summary, error) {
	st, err := jd.Read()
	if err != nil {
		return Summary{Model: mr.Model.Name}, fmt.Errorf("judge %s: read the journal: %w", mr.Model.Name, err)
	}
	items := JudgeItems(jd.Task, jd.Items, st, jd.Generators)
	total := Summary{Model: mr.Model.Name}
	for rung := 0; len(items) > 0 && rung < len(JudgeAttempts()); rung++ {
		mr.Items = ItemList(items)
		s, err := r.Run(ctx, mr)
		total = total.Add(s)
		if err != nil {
			return total, err
		}
		if st, err = jd.Read(); err != nil {
			return total, fmt.Errorf("judge %s: read the journal: %w", mr.Model.Name, err)
		}
		items = JudgeRetries(items, st, mr.Model.Name)
	}
	return total, nil
}

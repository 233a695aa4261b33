package judge

import (
	"context"
	"fmt"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/send"
)

// Judging is one judge model's phase over generators' answers: the judge
// task, the run's items (those of the task it judges among them), the
// generators whose answers it judges, and the journal as written so far.
type Judging struct {
	Task       *tasks.Task
	Items      []tasks.Item
	Generators []string
	// Read returns the journal as written so far (journal.Read of
	// the run's folder).
	Read func() (*journal.State, error)
}

// Sender sends one model's items and journals their outcomes
// (*send.Runner is one).
type Sender interface {
	Run(ctx context.Context, mr send.ModelRun) (send.Summary, error)
}

// Run runs a judge model (r sends its requests) over the answers the journal holds: the
// first attempt of every (answer, criterion) not judged yet, then, rung by
// rung of JudgeAttempts, the retries of the verdicts that could not be
// read. Each attempt is journalled as the judge model's record of its
// own item; a verdict unreadable at the last rung is kept as it is. It
// returns the summed summary of the rungs. Judging again later picks up
// answers written since (answered judgments are skipped by their keys).
func Run(ctx context.Context, r Sender, mr send.ModelRun, jd Judging) (send.Summary, error) {
	st, err := jd.Read()
	if err != nil {
		return send.Summary{Model: mr.Model.Name}, fmt.Errorf("judge %s: read the journal: %w", mr.Model.Name, err)
	}
	items := Items(jd.Task, jd.Items, st, jd.Generators)
	total := send.Summary{Model: mr.Model.Name}
	for rung := 0; len(items) > 0 && rung < len(tasks.JudgeAttempts()); rung++ {
		mr.Items = tasks.ItemList(items)
		s, err := r.Run(ctx, mr)
		total = total.Add(s)
		if err != nil {
			return total, err
		}
		if st, err = jd.Read(); err != nil {
			return total, fmt.Errorf("judge %s: read the journal: %w", mr.Model.Name, err)
		}
		items = Retries(items, st, mr.Model.Name)
	}
	return total, nil
}

package tasks_test

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
)

// plainTask is a task that NewRegistry accepts.
func plainTask(key string) *tasks.Task {
	return &tasks.Task{Key: key, Cohort: "pathology", Build: func(*tasks.Builder) {},
		Sim: tasks.Sim{Answers: func(tasks.Item) tasks.SimAnswers { return tasks.SimAnswers{} }}}
}

func TestNewRegistryRefusesWhatCannotRun(t *testing.T) {
	st := configs.DefaultStructures()
	with := func(edit func(*tasks.Benchmark)) error {
		b := tasks.Benchmark{Structures: st, Tasks: []*tasks.Task{plainTask("a"), plainTask("b")}}
		edit(&b)
		_, err := tasks.NewRegistry(b)
		return err
	}
	if err := with(func(*tasks.Benchmark) {}); err != nil {
		t.Fatalf("a valid benchmark is refused: %v", err)
	}
	for name, c := range map[string]struct {
		edit func(*tasks.Benchmark)
		want string
	}{
		"twice":      {func(b *tasks.Benchmark) { b.Tasks[1].Key = "a" }, `task "a" is registered twice`},
		"no key":     {func(b *tasks.Benchmark) { b.Tasks[0].Key = "" }, "a task has no key"},
		"no builder": {func(b *tasks.Benchmark) { b.Tasks[0].Build = nil }, "task a has no item builder"},
		"no cohort":  {func(b *tasks.Benchmark) { b.Tasks[0].Cohort = "" }, "task a names no dataset cohort"},
		"no sim":     {func(b *tasks.Benchmark) { b.Tasks[0].Sim.Answers = nil }, "task a has no simulated answers"},
		"alone":      {func(b *tasks.Benchmark) { b.Tasks[0].ScoredAlone = true }, "scored alone but extracts no answer"},
		"after":      {func(b *tasks.Benchmark) { b.Tasks[0].After = []string{"b"} }, "give After and Needs together"},
		"after unknown": {func(b *tasks.Benchmark) {
			b.Tasks[0].After = []string{"zz"}
			b.Tasks[0].Needs = func(tasks.Item) []string { return nil }
			b.Tasks[0].Prior = func(tasks.Item, map[string]*tasks.Record) []string { return nil }
		}, `task a after: unknown task "zz"; known tasks: a, b`},
		"family":      {func(b *tasks.Benchmark) { b.Families = []tasks.Family{{Name: "f", Tasks: []string{"a", "c"}}} }, `family f: unknown task "c"`},
		"family=task": {func(b *tasks.Benchmark) { b.Families = []tasks.Family{{Name: "a", Tasks: []string{"b"}}} }, `family "a" is named twice`},
		"composite": {func(b *tasks.Benchmark) {
			b.Composites = []*tasks.Composite{{Name: "c", Tasks: []string{"x"}, Score: func(*tasks.Answers, *tasks.ModelResults) error { return nil }}}
		}, `composite c: unknown task "x"`},
		"column":        {func(b *tasks.Benchmark) { b.Table = []tasks.Column{{Name: "A."}} }, "column A. has no Pick"},
		"no structures": {func(b *tasks.Benchmark) { b.Structures = nil }, "no base structures"},
	} {
		if err := with(c.edit); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

package tasks_test

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/score"
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
		"graded twice": {func(b *tasks.Benchmark) {
			b.Tasks[0].Answer = func(tasks.Item, string) extract.Label { return extract.Label{} }
			b.Tasks[0].Graded = []tasks.GradedField{{Name: "x"}}
		}, "both a closed answer and graded fields"},
		"after": {func(b *tasks.Benchmark) { b.Tasks[0].After = []string{"b"} }, "give After and Needs together"},
		"after unknown": {func(b *tasks.Benchmark) {
			b.Tasks[0].After = []string{"zz"}
			b.Tasks[0].Needs = func(tasks.Item) []string { return nil }
			b.Tasks[0].Prior = func(tasks.Item, map[string]*journal.Record) []string { return nil }
		}, `task a after: unknown task "zz"; known tasks: a, b`},
		"family":      {func(b *tasks.Benchmark) { b.Families = []tasks.Family{{Name: "f", Tasks: []string{"a", "c"}}} }, `family f: unknown task "c"`},
		"family=task": {func(b *tasks.Benchmark) { b.Families = []tasks.Family{{Name: "a", Tasks: []string{"b"}}} }, `family "a" is named twice`},
		"composite": {func(b *tasks.Benchmark) {
			b.Scoring = &score.Card{Composites: []*score.Composite{{Name: "c", Tasks: []string{"x"}, Score: func(*score.Answers, *score.ModelResults) error { return nil }}}}
		}, `composite c: unknown task "x"`},
		"column":        {func(b *tasks.Benchmark) { b.Scoring = &score.Card{Table: []score.Column{{Name: "A."}}} }, "column A. has no Pick"},
		"no structures": {func(b *tasks.Benchmark) { b.Structures = nil }, "no base structures"},
	} {
		if err := with(c.edit); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

// TestTextOnlyModelAnswersOnlyTasksWithoutImages: "Text models cover
// L1/L2/L4/L5/O1; image-capable models additionally cover L3 and L6" (the
// paper, Table A7). A text-only model answers a text task, but neither a
// task that shows images nor one whose prompts include answers about
// images (After), however deep; every other model answers all of them.
func TestTextOnlyModelAnswersOnlyTasksWithoutImages(t *testing.T) {
	img, read, deeper, text := plainTask("img"), plainTask("read"), plainTask("deeper"), plainTask("text")
	img.Images = []string{"overview"}
	for x, after := range map[*tasks.Task]string{read: "img", deeper: "read"} {
		x.After = []string{after}
		x.Needs = func(tasks.Item) []string { return nil }
		x.Prior = func(tasks.Item, map[string]*journal.Record) []string { return nil }
	}
	reg, err := tasks.NewRegistry(tasks.Benchmark{Structures: configs.DefaultStructures(), Tasks: []*tasks.Task{img, read, deeper, text}})
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]configs.TaskSettings{"img": {MaxTokens: 1}, "read": {MaxTokens: 2}, "deeper": {MaxTokens: 3}, "text": {MaxTokens: 4}}
	tm := configs.Model{Name: "T", TextOnly: true, Tasks: settings}
	mm := configs.Model{Name: "M", Tasks: settings}
	for key, want := range map[string]bool{"img": false, "read": false, "deeper": false, "text": true, "unknown": true} {
		if got := reg.Answerable(tm, key); got != want {
			t.Errorf("text-only model, task %s: answerable %v, want %v", key, got, want)
		}
		if !reg.Answerable(mm, key) {
			t.Errorf("image-capable model cannot answer %s", key)
		}
	}
	trimmed := reg.TrimTasks(tm)
	if len(trimmed.Tasks) != 1 || trimmed.Tasks["text"].MaxTokens != 4 {
		t.Errorf("text-only model asked %v, want the text task only", trimmed.Tasks)
	}
	if len(tm.Tasks) != 4 {
		t.Errorf("TrimTasks changed the model it was given: %v", tm.Tasks)
	}
	if got := reg.TrimTasks(mm); len(got.Tasks) != 4 {
		t.Errorf("image-capable model asked %v, want every task", got.Tasks)
	}
	wls, err := reg.PaperScale([]configs.Model{tm, mm}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range wls {
		got = append(got, w.Model+"/"+w.Task)
	}
	if want := "T/text M/img M/read M/deeper M/text"; strings.Join(got, " ") != want {
		t.Errorf("paper-scale workloads %v, want %s", got, want)
	}
}

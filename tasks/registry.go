package tasks

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// Benchmark is what a Registry is made of: a benchmark's tasks, the names
// that stand for several of them, and how its answers are scored across
// tasks and laid out (Scoring).
type Benchmark struct {
	// Structures are the base structures the tasks' prompts, answers and
	// scores name.
	Structures *configs.Structures
	// Tasks in the order items are built, sent and reported.
	Tasks []*Task
	// Families are names a campaign's task list may use for several tasks.
	Families []Family
	// Scoring is how its answers are scored across tasks and laid out in
	// score files and reports (a *score.Card); nil scores each task alone.
	Scoring Scoring
}

// Scoring is how a benchmark's answers are scored across tasks and laid
// out in its score files and report: package tasks/score's *score.Card.
// The registry carries it for the scorer without reading it, and checks
// it once: Check is given the registry's check that task keys are known.
type Scoring interface {
	Check(known func(where string, keys ...string) error) error
}

// Family is a name that stands for several tasks in a campaign's task list
// ("carepath" for the L6 episode's three tasks).
type Family struct {
	Name  string
	Tasks []string
}

// Registry is a benchmark's tasks, checked and indexed. It is a value the
// caller builds (npcbench.Registry for NPCBench) and hands to whatever
// needs the tasks: nothing in npcorch holds one globally.
type Registry struct {
	b        Benchmark
	byKey    map[string]*Task
	families map[string]Family
	// upstream holds the tasks whose answers other tasks' prompts include.
	upstream map[string]bool
}

// NewRegistry checks a benchmark's tasks (unique keys, a builder and
// simulated answers for each, known tasks wherever one is named) and
// indexes them.
func NewRegistry(b Benchmark) (*Registry, error) {
	r := &Registry{b: b, byKey: map[string]*Task{}, families: map[string]Family{}, upstream: map[string]bool{}}
	if b.Structures == nil {
		return nil, fmt.Errorf("task registry: no base structures")
	}
	for _, check := range []func() error{r.addTasks, r.addFamilies, r.checkScoring} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Registry) addTasks() error {
	for _, t := range r.b.Tasks {
		if err := r.addTask(t); err != nil {
			return err
		}
	}
	for _, t := range r.b.Tasks {
		if err := r.known("task "+t.Key+" after", t.After...); err != nil {
			return err
		}
		for _, up := range t.After {
			r.upstream[up] = true
		}
	}
	return nil
}

func (r *Registry) addFamilies() error {
	for _, f := range r.b.Families {
		if _, dup := r.byKey[f.Name]; dup || r.families[f.Name].Name != "" {
			return fmt.Errorf("task registry: family %q is named twice", f.Name)
		}
		if err := r.known("family "+f.Name, f.Tasks...); err != nil {
			return err
		}
		r.families[f.Name] = f
	}
	return nil
}

func (r *Registry) checkScoring() error {
	if r.b.Scoring == nil {
		return nil
	}
	return r.b.Scoring.Check(r.known)
}

// MustRegistry is NewRegistry for a benchmark fixed in code, whose tests
// prove it valid: it panics on an error.
func MustRegistry(b Benchmark) *Registry {
	r, err := NewRegistry(b)
	if err != nil {
		panic(err)
	}
	return r
}

func (r *Registry) addTask(t *Task) error {
	switch {
	case t == nil || t.Key == "":
		return fmt.Errorf("task registry: a task has no key")
	case r.byKey[t.Key] != nil:
		return fmt.Errorf("task registry: task %q is registered twice", t.Key)
	case t.Build == nil && t.Judges == "":
		return fmt.Errorf("task registry: task %s has no item builder", t.Key)
	case t.Build != nil && t.Judges != "":
		return fmt.Errorf("task registry: judge task %s has an item builder; its items come from the answers of %s", t.Key, t.Judges)
	case t.Cohort == "":
		return fmt.Errorf("task registry: task %s names no dataset cohort to build its items from", t.Key)
	case t.Sim.Answers == nil:
		return fmt.Errorf("task registry: task %s has no simulated answers", t.Key)
	case t.ScoredAlone && t.Answer == nil:
		return fmt.Errorf("task registry: task %s is scored alone but extracts no answer", t.Key)
	case t.Answer != nil && len(t.Graded) > 0:
		return fmt.Errorf("task registry: task %s has both a closed answer and graded fields; repeats grade the answer, so give one", t.Key)
	case (t.Needs != nil) != (len(t.After) > 0):
		return fmt.Errorf("task registry: task %s needs other answers: give After and Needs together", t.Key)
	}
	r.byKey[t.Key] = t
	return nil
}

// known checks that every key names a registered task.
func (r *Registry) known(where string, keys ...string) error {
	for _, k := range keys {
		if r.byKey[k] == nil {
			return fmt.Errorf("task registry: %s: %w", where, r.unknownTask(k, false))
		}
	}
	return nil
}

// Structures are the base structures the tasks name.
func (r *Registry) Structures() *configs.Structures { return r.b.Structures }

// Tasks lists the tasks in registry order.
func (r *Registry) Tasks() []*Task { return slices.Clone(r.b.Tasks) }

// Keys lists the task keys in registry order.
func (r *Registry) Keys() []string {
	keys := make([]string, len(r.b.Tasks))
	for i, t := range r.b.Tasks {
		keys[i] = t.Key
	}
	return keys
}

// Task returns the task of a key, or an error listing the known ones.
func (r *Registry) Task(key string) (*Task, error) {
	if t := r.byKey[key]; t != nil {
		return t, nil
	}
	return nil, r.unknownTask(key, false)
}

// unknown is the error for a key that names no task, in a task list
// (where a family may stand for its tasks).
func (r *Registry) unknown(key string) error { return r.unknownTask(key, true) }

// unknownTask is the error for a key that names no task; families says
// whether the names of families are known there too.
func (r *Registry) unknownTask(key string, families bool) error {
	msg := fmt.Sprintf("unknown task %q; known tasks: %s", key, strings.Join(r.Keys(), ", "))
	if families && len(r.b.Families) > 0 {
		names := make([]string, len(r.b.Families))
		for i, f := range r.b.Families {
			names[i] = f.Name
		}
		msg += "; or a family of them: " + strings.Join(names, ", ")
	}
	return errors.New(msg)
}

// Select expands a task list (task keys and family names) into task keys
// in registry order; an empty list selects every task but the matched
// controls (Task.Control).
func (r *Registry) Select(names []string) ([]string, error) {
	if len(names) == 0 {
		var keys []string
		for _, t := range r.b.Tasks {
			if !t.Control {
				keys = append(keys, t.Key)
			}
		}
		return keys, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if f, ok := r.families[n]; ok {
			for _, k := range f.Tasks {
				want[k] = true
			}
			continue
		}
		if r.byKey[n] == nil {
			return nil, r.unknown(n)
		}
		want[n] = true
	}
	var out []string
	for _, t := range r.b.Tasks {
		if want[t.Key] {
			out = append(out, t.Key)
		}
	}
	return out, r.checkAfter(out, want)
}

// checkAfter refuses a task list that names a task without the tasks whose
// answers its prompts include: those items could never be asked.
func (r *Registry) checkAfter(keys []string, want map[string]bool) error {
	var errs []error
	for _, k := range keys {
		var lacking []string
		for _, up := range r.byKey[k].After {
			if !want[up] {
				lacking = append(lacking, up)
			}
		}
		if len(lacking) == 0 {
			continue
		}
		msg := fmt.Sprintf("task %s writes the model's answers to %s into its prompts; add %s to the task list",
			k, strings.Join(lacking, " and "), strings.Join(lacking, ", "))
		for _, f := range r.b.Families {
			if slices.Contains(f.Tasks, k) && !slices.ContainsFunc(lacking, func(l string) bool { return !slices.Contains(f.Tasks, l) }) {
				msg += ", or name the family " + f.Name
				break
			}
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// ImageNeeds lists, per dataset cohort, the kinds of prepared image its
// tasks show (Task.Images), in task order: what `npcorch prep` makes for a
// patient of that cohort.
func (r *Registry) ImageNeeds() map[string][]string {
	needs := map[string][]string{}
	for _, t := range r.b.Tasks {
		for _, k := range t.Images {
			if !slices.Contains(needs[t.Cohort], k) {
				needs[t.Cohort] = append(needs[t.Cohort], k)
			}
		}
	}
	return needs
}

// Answerable reports whether model m can answer task key. A text-only
// model (models.yaml text_only) answers no task that shows images or is of
// an image level (ImageLevel), nor one whose prompts include answers to
// such a task (After): "Text models cover
// L1/L2/L4/L5/O1; image-capable models additionally cover L3 and L6" (the
// paper, Table A7). Every other model answers every task.
func (r *Registry) Answerable(m configs.Model, key string) bool {
	return !m.TextOnly || !r.readsImages(key, map[string]bool{})
}

// readsImages reports whether task key shows images, is of an image
// level, or builds on the
// answers of a task that does; seen guards against a loop of After.
func (r *Registry) readsImages(key string, seen map[string]bool) bool {
	t := r.Lookup(key)
	if t == nil || seen[key] {
		return false
	}
	seen[key] = true
	if len(t.Images) > 0 || t.ImageLevel {
		return true
	}
	return slices.ContainsFunc(t.After, func(k string) bool { return r.readsImages(k, seen) })
}

// TrimTasks returns m with the task settings of the tasks it can answer
// only (Answerable): a campaign asks a model the tasks it has settings
// for, so a text-only model is asked no task that needs images.
func (r *Registry) TrimTasks(m configs.Model) configs.Model {
	if !m.TextOnly {
		return m
	}
	tasks := make(map[string]configs.TaskSettings, len(m.Tasks))
	for k, v := range m.Tasks {
		if r.Answerable(m, k) {
			tasks[k] = v
		}
	}
	m.Tasks = tasks
	return m
}

// Families are the names a task list may use for several tasks.
func (r *Registry) Families() []Family { return slices.Clone(r.b.Families) }

// Scoring is how the benchmark's answers are scored across tasks and
// laid out; nil when each task is scored alone.
func (r *Registry) Scoring() Scoring { return r.b.Scoring }

// Upstream reports whether other tasks' prompts include a task's answers.
func (r *Registry) Upstream(key string) bool { return r.upstream[key] }

// Lookup returns the task of a key; nil for an unknown key or a nil
// registry.
func (r *Registry) Lookup(key string) *Task {
	if r == nil {
		return nil
	}
	return r.byKey[key]
}

// Needs returns the items whose answers an item's prompt includes.
func (r *Registry) Needs(it Item) []string {
	if t := r.Lookup(it.Task); t != nil && t.Needs != nil {
		return t.Needs(it)
	}
	return nil
}

// CheckTaskRefs checks every task key a config file writes (a campaign's
// task list and its models' task settings, or a model registry's) against
// the registry: each unknown one is an error naming its file, line and
// field, and the known tasks. A family name stands for its tasks in a task
// list only.
func (r *Registry) CheckTaskRefs(refs []configs.TaskRef) error {
	var errs []error
	for _, ref := range refs {
		if r.byKey[ref.Key] != nil || ref.InList && r.families[ref.Key].Name != "" {
			continue
		}
		errs = append(errs, ref.Errorf("%v", r.unknownTask(ref.Key, ref.InList)))
	}
	return errors.Join(errs...)
}

package tasks

import (
	"github.com/npcorch/npcorch/tasks/dataset"
)

// BuildItems turns a raw dataset and its prepared images into the items of
// the given tasks, in a stable order (registry order of the tasks, then
// what each task's builder makes, in dataset order). Items that cannot be
// built are returned as problems; a task the registry does not know is an
// error.
func BuildItems(reg *Registry, raw *dataset.Raw, prep *dataset.Prepared, keys []string) ([]Item, []ItemProblem, error) {
	prepared := make(map[string]*dataset.PreparedPatient, len(prep.Patients))
	for i := range prep.Patients {
		prepared[prep.Patients[i].ID] = &prep.Patients[i]
	}
	selected, err := reg.Select(keys)
	if err != nil {
		return nil, nil, err
	}
	b := &Builder{raw: raw, prepared: prepared, ids: map[string]bool{}}
	for _, key := range selected {
		b.task = reg.byKey[key]
		if b.task.Build != nil {
			b.task.Build(b)
		}
	}
	return b.items, b.problems, nil
}

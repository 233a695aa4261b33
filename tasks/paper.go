package tasks

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
)

// PaperScale returns each model's workload at the paper's scale, one per
// task of the task list (task keys and family names; every task when
// empty) that the model can answer (Answerable: a text-only model none
// that needs images), in model order and then registry order: the request
// mix of each task's descriptor (Task.Paper), which the scheduler takes as
// several workloads per model.
func (r *Registry) PaperScale(models []configs.Model, names []string) ([]schedule.Workload, error) {
	keys, err := r.Select(names)
	if err != nil {
		return nil, err
	}
	var out []schedule.Workload
	for _, m := range models {
		for _, k := range keys {
			if !r.Answerable(m, k) {
				continue
			}
			out = append(out, schedule.MixWorkload(m, r.PaperMix(k)))
		}
	}
	return out, nil
}

// PaperMix is a task's request mix at the paper's scale, its Task set to
// the task's key (a zero mix for a key the registry does not know).
func (r *Registry) PaperMix(key string) schedule.RequestMix {
	t := r.byKey[key]
	if t == nil {
		return schedule.RequestMix{}
	}
	mix := t.Paper
	mix.Task = t.Key
	return mix
}

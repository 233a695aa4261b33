package tasks

import (
	"slices"

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
			if !r.Answerable(m, k) || r.byKey[k].Judges != "" {
				continue // a judge task's work is its judges' (PaperJudging)
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

// PaperJudging is the judges' work at the paper's scale: for each judge
// task whose judged task is among names, each judge's requests are the
// task's paper mix once per generator that answers the judged task. It
// returns the workloads and, by judge, the generators it waits for.
func (r *Registry) PaperJudging(judges, generators []configs.Model, names []string) ([]schedule.Workload, map[string][]string, error) {
	keys, err := r.Select(names)
	if err != nil {
		return nil, nil, err
	}
	var out []schedule.Workload
	after := map[string][]string{}
	for _, t := range r.b.Tasks {
		if t.Judges == "" || !slices.Contains(keys, t.Judges) {
			continue
		}
		var gens []string
		for _, g := range generators {
			if r.Answerable(g, t.Judges) {
				gens = append(gens, g.Name)
			}
		}
		for _, j := range judges {
			mix := r.PaperMix(t.Key)
			mix.Requests *= len(gens)
			out = append(out, schedule.MixWorkload(j, mix))
			after[j.Name] = append(after[j.Name], gens...)
		}
	}
	return out, after, nil
}

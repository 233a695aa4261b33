package schedule

import (
	"fmt"
	"slices"
)

// Work that depends on other models' answers (a judge's: it judges what
// the generators wrote). Config.After names those models. Such a
// model waits until the first of them has ended; it is then placed like
// any model, but only on GPUs that no waiting independent model takes
// (when GPUs are short it thus runs after the generators). Its work
// becomes available as they end, in equal shares: until the last has
// ended, the fluid drains it no lower than the shares still to come, and
// it cannot finish.

// dependsOn records a dependent model's After list and total work in the
// fluid: its floor is the whole work until one of them ends.
func (f *fluid) dependsOn(model string, after []string, work float64) {
	if f.after == nil {
		f.after, f.total, f.floor, f.ended = map[string][]string{}, map[string]float64{}, map[string]float64{}, map[string]bool{}
	}
	f.after[model], f.total[model] = after, work
	f.updateFloor(model)
}

// end records that a model's answers are all in: the floors of the models
// that depend on it fall by its share.
func (f *fluid) end(model string) {
	if f.ended == nil {
		f.ended = map[string]bool{}
	}
	f.ended[model] = true
	for dep, after := range f.after {
		if slices.Contains(after, model) {
			f.updateFloor(dep)
		}
	}
}

func (f *fluid) updateFloor(model string) {
	after := f.after[model]
	left := 0
	for _, a := range after {
		if !f.ended[a] {
			left++
		}
	}
	f.floor[model] = f.total[model] * float64(left) / float64(len(after))
}

// waiting reports whether a dependent model has no answers to work on
// yet: none of the models it depends on has ended.
func (f *fluid) waiting(model string) bool {
	after := f.after[model]
	return len(after) > 0 && !slices.ContainsFunc(after, func(a string) bool { return f.ended[a] })
}

// answersIn reports whether a model's answers are all in: it finished, or
// it ended without them, or it runs beside the schedule.
func answersIn(ms *modelState) bool {
	return ms.status.terminal() || ms.status == StatusStopping
}

// dependencies checks Config.After against the models and records it in
// the fluid.
func (s *Scheduler) dependencies() error {
	for model, after := range s.cfg.After {
		if _, ok := s.byName[model]; !ok {
			return fmt.Errorf("schedule: dependent model %q is not a model of the campaign", model)
		}
		for _, a := range after {
			if _, ok := s.byName[a]; !ok || a == model {
				return fmt.Errorf("schedule: model %s's work depends on %q, which is not another model of the campaign", model, a)
			}
		}
	}
	for _, ms := range s.models {
		if after := s.cfg.After[ms.m.Name]; len(after) > 0 {
			ms.after = after
			s.fluid.dependsOn(ms.m.Name, after, ms.work)
		}
	}
	s.noteEnded()
	return nil
}

// noteEnded tells the fluid of every model whose answers are in.
func (s *Scheduler) noteEnded() {
	for _, ms := range s.models {
		if answersIn(ms) && !s.fluid.ended[ms.m.Name] {
			s.fluid.end(ms.m.Name)
		}
	}
}

// dependent reports whether ms's work depends on other models'.
func (ms *modelState) dependent() bool { return len(ms.after) > 0 }

// dependentNote says when a dependent model started and why then: as soon
// as the first model it needs had ended and GPUs were free, or only once
// GPUs were left over by the models still waiting or running.
func (s *Scheduler) dependentNote(ms *modelState) string {
	ended := 0
	for _, a := range ms.after {
		if s.fluid.ended[a] {
			ended++
		}
	}
	switch {
	case ended == len(ms.after):
		return fmt.Sprintf("needs the answers of %d model(s): started after all had ended (GPUs were short until then)", len(ms.after))
	case ended == 1:
		return fmt.Sprintf("needs the answers of %d model(s): started once the first had ended, beside the %d still to end", len(ms.after), len(ms.after)-1)
	}
	return fmt.Sprintf("needs the answers of %d model(s): started when %d had ended (GPUs were short until then), beside the %d still to end", len(ms.after), ended, len(ms.after)-ended)
}

// yieldIdle stops the replicas of the dependent models that have worked
// through all there is to work on when they are all that runs while an
// independent model waits for GPUs: the two would otherwise wait for each
// other (the generator for the judge's GPUs, the judge for the
// generator's answers). The dependent models wait again and start, on
// what is left, once the independent one has its GPUs.
func (s *Scheduler) yieldIdle() bool {
	if !slices.ContainsFunc(s.models, func(ms *modelState) bool { return ms.status == StatusPending && !ms.dependent() }) {
		return false
	}
	var idle []*modelState
	for _, ms := range s.models {
		if len(ms.live) == 0 {
			continue
		}
		name := ms.m.Name
		if !ms.dependent() || ms.status != StatusRunning || s.fluid.rate(name) <= 0 || s.fluid.remaining[name] > s.fluid.floor[name] {
			return false
		}
		idle = append(idle, ms)
	}
	for _, ms := range idle {
		ms.status = StatusPending
		s.stopLive(ms)
	}
	return len(idle) > 0
}

package campaign

import (
	"fmt"
	"slices"
	"time"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// What the scheduler measures a run by: each model's share of its work
// done (EventProgress), which corrects its estimate of the work left, and
// what each replica served (EventSpeed), from which it estimates the
// models' speeds on this node (docs/BENCHMARKS.md, "Re-planning on
// measured speeds": progress is what closes the gap to the plan that knew
// the speeds).

// modelProgress is a model's work by task and how much of it is done.
type modelProgress struct {
	tasks map[string]*taskProgress
	total float64 // token equivalents, as the scheduler counts them
	sent  float64 // the share the scheduler heard last
}

// taskProgress is one task's requests, those done, and its work.
type taskProgress struct {
	requests, done int
	work           float64
}

// share is the part of the model's work done: each task's work weighted
// by its share of requests done.
func (p *modelProgress) share() float64 {
	if p.total <= 0 {
		return 0
	}
	done := 0.0
	for _, t := range p.tasks {
		if t.requests > 0 {
			done += t.work * float64(min(t.done, t.requests)) / float64(t.requests)
		}
	}
	return done / p.total
}

// meter adds up what one replica served since its last speed sample.
type meter struct {
	since           time.Time
	work, images    float64
	ttftSum         float64
	ttftN, answered int
}

// add counts one answer, its work in token equivalents as est counts
// them.
func (m *meter) add(rec journal.Record, est schedule.Estimator) {
	u := rec.Answer.Usage
	m.work += est.Work(schedule.Workload{PromptTokens: int64(u.PromptTokens), OutputTokens: int64(u.CompletionTokens)})
	m.images += float64(rec.Images)
	if t := rec.Answer.Timing.TTFTms; t > 0 {
		m.ttftSum += t / 1000
		m.ttftN++
	}
	m.answered++
}

// take returns the sample so far, up to now, and starts the next one.
func (m *meter) take(now time.Time) schedule.SpeedSample {
	x := schedule.SpeedSample{Seconds: now.Sub(m.since).Seconds(), Work: m.work, Images: m.images}
	if m.ttftN > 0 {
		x.TTFT = m.ttftSum / float64(m.ttftN)
	}
	*m = meter{since: now}
	return x
}

// trackProgress sets up each local model's work by task, with the
// requests the journal answered before this run already done.
func (l *loop) trackProgress(workloads []schedule.Workload) {
	for _, w := range workloads {
		p := l.progress[w.Model]
		if p == nil {
			p = &modelProgress{tasks: map[string]*taskProgress{}}
			l.progress[w.Model] = p
		}
		work := l.d.est.Work(w)
		p.tasks[w.Task] = &taskProgress{requests: w.Requests, done: l.d.answered[w.Model][w.Task], work: work}
		p.total += work
	}
}

// onJournaled counts a journaled request towards its model's progress and,
// answered, towards its replica's speed.
func (l *loop) onJournaled(rec journal.Record) {
	l.d.live.Post(live.Journaled{Record: rec})
	if p := l.progress[rec.Model]; p != nil {
		if t := p.tasks[rec.Task]; t != nil {
			t.done++
		}
	}
	if rec.Status != journal.StatusAnswered || rec.Answer == nil {
		return
	}
	if en := l.byMember[rec.Replica]; en != nil && en.phase != phaseStarting {
		en.meter.add(rec, l.d.est)
	}
}

// measure tells the scheduler each model's progress and each serving
// replica's speed since its last sample, and writes its estimates to
// RUN/speeds.json for whoever follows the run.
func (l *loop) measure() {
	l.sendProgress()
	for _, id := range l.engineIDs() {
		if en := l.engines[id]; en.phase == phaseReady || en.phase == phaseStopping {
			l.sendSpeed(en)
		}
	}
	if l.sched == nil {
		return
	}
	if err := l.d.writeSpeeds(l.sched.Speeds()); err != nil {
		// The run goes on; the file is rewritten at the next tick and at the end.
		fmt.Fprintf(l.d.opt.Log, "%v\n", err)
	}
}

// sendProgress tells the scheduler the share done of every model whose
// share moved since it last heard.
func (l *loop) sendProgress() {
	for _, name := range l.progressModels() {
		p := l.progress[name]
		if done := p.share(); done != p.sent {
			p.sent = done
			l.tell(schedule.Event{Kind: schedule.EventProgress, Model: name, Done: done})
		}
	}
}

// sendSpeed tells the scheduler what en served since its last sample, if
// it answered anything.
func (l *loop) sendSpeed(en *engine) {
	if en.meter.answered == 0 {
		return
	}
	x := en.meter.take(l.d.now())
	if x.Seconds <= 0 {
		return
	}
	l.tell(schedule.Event{Kind: schedule.EventSpeed, Replica: en.a.ID, Model: en.a.Model, Index: en.a.Index, Speed: x})
}

// progressModels are the tracked models in the campaign's order.
func (l *loop) progressModels() []string {
	var out []string
	for _, m := range l.d.opt.Campaign.Resolved {
		if _, ok := l.progress[m.Name]; ok {
			out = append(out, m.Name)
		}
	}
	return out
}

// engineIDs are the replicas started so far, in start order.
func (l *loop) engineIDs() []schedule.ReplicaID {
	ids := make([]schedule.ReplicaID, 0, len(l.engines))
	for id := range l.engines {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

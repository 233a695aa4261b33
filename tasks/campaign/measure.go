package campaign

import (
	"fmt"
	"slices"

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

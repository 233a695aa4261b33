package campaign

import (
	"time"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
)

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

package live

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/npcorch/npcorch/tasks/journal"
)

// RunUnknown is the state of a run whose folder holds no readable status
// file: a run of an older npcorch, one that ended before its first write,
// or a file a machine crash left empty.
const RunUnknown RunState = "unknown"

// Skeleton is the snapshot of a run known only by what it asks (Begin),
// for a run folder whose status file is missing or unreadable; why says
// which, and is kept in the snapshot's notes.
func Skeleton(campaign, runDir string, b Begin, why string) *Snapshot {
	s := newState(campaign, runDir, "", 0, func() time.Time { return b.Started })
	b.apply(s)
	s.run = RunUnknown
	snap := s.snapshot()
	snap.Notes = append(snap.Notes, why+": states, engines and the plan are unknown; the counts are the journal's")
	return snap
}

// Recount puts the journal's counts into a snapshot read from a run
// folder: the journal is the truth after any crash, the status file at
// most a few seconds behind it. records are the journal's, one per
// request (journal.State.Records). Without grade, the snapshot's
// grading stays, and answers it had not seen count as ungraded.
func Recount(s *Snapshot, records map[string]journal.Record, grade Grader) *Snapshot {
	st := &state{grade: grade}
	byTask := map[[2]string]*tally{}
	for _, rec := range records {
		k := [2]string{rec.Model, rec.Task}
		if byTask[k] == nil {
			byTask[k] = &tally{}
		}
		byTask[k].add(st.count(rec))
	}
	out := *s
	out.Models = slices.Clone(s.Models)
	var total tally
	requests := 0
	for i, m := range out.Models {
		var sum tally
		m.Tasks = slices.Clone(m.Tasks)
		for j, t := range m.Tasks {
			tl := tally{}
			if p := byTask[[2]string{m.Model, t.Task}]; p != nil {
				tl = *p
			}
			if grade == nil {
				tl.correct, tl.wrong, tl.invalid = t.Correct, t.Wrong, t.Invalid
				tl.ungraded = max(tl.answered-tl.correct-tl.wrong-tl.invalid, 0)
			}
			m.Tasks[j].Counts = counts(t.Requests, tl)
			sum.add(tl)
		}
		m.Counts = counts(m.Requests, sum)
		out.Models[i] = m
		total.add(sum)
		requests += m.Requests
	}
	out.Totals = counts(requests, total)
	return &out
}

// CheckAlive turns the snapshot of a run its status file says is running
// into RunGone when its process is gone (same host) or its status file
// has not moved for Stale, and says why in Error, with resume, the
// command that continues the run.
func CheckAlive(s *Snapshot, now time.Time, resume string) {
	if s.State != RunRunning && s.State != RunStarting {
		return
	}
	host, _ := os.Hostname()
	switch {
	case host == s.Host && !processAlive(s.PID):
		s.State = RunGone
		s.Error = fmt.Sprintf("its process (pid %d on %s) is gone: it crashed or was killed; continue it with `%s`", s.PID, s.Host, resume)
	case now.Sub(s.Updated) > Stale:
		s.State = RunGone
		s.Error = fmt.Sprintf("its status file has not moved for %s (pid %d on %s): the process is gone or hung; continue it with `%s` once it is gone",
			now.Sub(s.Updated).Round(time.Second), s.PID, s.Host, resume)
	}
	if s.State != RunGone {
		return
	}
	s.ETA = ETA{Basis: "the run is not running"}
	s.Models = slices.Clone(s.Models)
	for i, m := range s.Models {
		switch m.State {
		case ModelWaiting, ModelStarting, ModelServing:
			s.Models[i].State, s.Models[i].ETA = ModelStopped, ETA{Basis: "the run is not running"}
		}
	}
	s.Notes = append(s.Notes, "engines are shown as the run last saw them; they end with the run")
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

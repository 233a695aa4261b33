package trial

import (
	"fmt"
	"strings"
)

// Summary counts a series of trials.
type Summary struct {
	Trials int
	// Faults counts, per fault, the trials that planned it and those in
	// which it fired (a fault whose moment came after the last engine
	// stopped does not fire).
	Planned, Fired map[Fault]int
	// Resumed counts trials that needed more than one run, per fault.
	Resumed map[Fault]int
	// Items is the number of requests answered, over all trials.
	Items          int
	FailedAttempts int
	EngineCrashes  int
	Torn           int
	// Mismatches counts broken promises over all trials.
	Mismatches int
}

// Summarize counts results.
func Summarize(results []Result) Summary {
	s := Summary{Planned: map[Fault]int{}, Fired: map[Fault]int{}, Resumed: map[Fault]int{}}
	for _, r := range results {
		s.Trials++
		var f Fault = "none"
		if r.Plan != nil {
			f = r.Plan.Fault
		}
		s.Planned[f]++
		if r.Fired {
			s.Fired[f]++
		}
		if r.Runs > 1 {
			s.Resumed[f]++
		}
		s.Items += r.Items
		s.FailedAttempts += r.FailedAttempts
		s.EngineCrashes += r.EngineCrashes
		s.Torn += r.Torn
		s.Mismatches += len(r.Mismatches)
	}
	return s
}

// String is the report block: trials, faults of each kind, items,
// mismatches.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "trials: %d\n", s.Trials)
	for _, f := range Faults {
		fmt.Fprintf(&b, "  %-13s planned %d, fired %d, needed a resume %d\n", f, s.Planned[f], s.Fired[f], s.Resumed[f])
	}
	fmt.Fprintf(&b, "items answered: %d (failed attempts retried or journaled not run: %d; engine crashes seen by npcorch: %d; torn lines set aside: %d)\n",
		s.Items, s.FailedAttempts, s.EngineCrashes, s.Torn)
	fmt.Fprintf(&b, "mismatches: %d", s.Mismatches)
	return b.String()
}

// Line is one trial's report line.
func Line(r Result) string {
	fault, after := "none", 0
	if r.Plan != nil {
		fault, after = string(r.Plan.Fault), r.Plan.After
	}
	status := "ok"
	if len(r.Mismatches) > 0 {
		status = "MISMATCH: " + strings.Join(r.Mismatches, "; ")
	}
	fired := "not fired"
	if r.Fired {
		fired = "hit " + r.Target
	}
	return fmt.Sprintf("%-9s %-13s after %3d lines, %s; %d run(s), %d items, %d failed attempts, %d crashes, %.1fs: %s",
		r.Name, fault, after, fired, r.Runs, r.Items, r.FailedAttempts, r.EngineCrashes, r.Elapsed.Seconds(), status)
}

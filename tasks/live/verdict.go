package live

import "github.com/npcorch/npcorch/tasks/journal"

// Verdict is what a Grader makes of an answered request.
type Verdict int

// Verdicts.
const (
	Ungraded Verdict = iota // nothing to grade it by
	Correct
	Wrong
	Invalid // the extractor could not read it: scored wrong
)

// Grader grades an answered record against its item's gold label.
type Grader func(rec journal.Record) Verdict

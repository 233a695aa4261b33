package npcbench

import (
	"strings"

	"github.com/npcorch/npcorch/tasks/score"
)

// LRevControls names the L5 primary task and its matched controls in a
// campaign's task list, and the composite that compares them.
const LRevControls = "l_rev_controls"

// pairing is one matched comparison: the same items under a baseline and
// a treatment task, scored as treatment minus baseline.
type pairing struct {
	name                string
	baseline, treatment string
}

// lRevPairings follow the paper's signs: full history minus snapshot, full
// history minus shuffled (Tables A25, A26), persistent minus packed
// history (the serial interaction experiment).
var lRevPairings = []pairing{
	{"L5 full history − snapshot", LRevSnapshot, LRev},
	{"L5 full history − shuffled", LRevShuffled, LRev},
	{"L5 serial − packed history", LRev, LRevSerial},
}

// controls is a composite of paired comparisons, with a bar chart of an
// endpoint of each task it reads.
func controls(name, title, caption string, pairings []pairing, titles, keys []string, endpoint func(*score.TaskScore) *score.Score) *score.Composite {
	return &score.Composite{
		Name:  name,
		Tasks: keys,
		Score: func(a *score.Answers, mr *score.ModelResults) error { return compare(a, mr, pairings) },
		Figure: &score.Figure{File: name + ".png", Title: title, Caption: caption, Series: titles,
			Scores: func(mr *score.ModelResults) []*score.Score {
				var out []*score.Score
				any := false
				for _, k := range keys {
					var s *score.Score
					if ts := mr.Task(k); ts != nil {
						s, any = endpoint(ts), true
					}
					out = append(out, s)
				}
				if !any {
					return nil
				}
				return out
			}},
	}
}

// compare scores every pairing whose two tasks ran, matching units by
// their item id without the task key.
func compare(a *score.Answers, mr *score.ModelResults, pairings []pairing) error {
	for _, p := range pairings {
		if len(a.Items(p.baseline)) == 0 || len(a.Items(p.treatment)) == 0 {
			continue
		}
		base, err := a.Units(p.baseline)
		if err != nil {
			return err
		}
		treat, err := a.Units(p.treatment)
		if err != nil {
			return err
		}
		c, err := score.Compare(p.name, p.baseline, p.treatment, base, treat, pairKey, a.Options())
		if err != nil {
			return err
		}
		mr.Controls = append(mr.Controls, c)
	}
	return nil
}

// pairKey is an item's id without its task: the same patient and
// question under another condition.
func pairKey(u score.Unit) string {
	_, rest, _ := strings.Cut(u.Item, "/")
	return rest
}

// lRevControls compares L5's conditions.
func lRevControls() *score.Composite {
	return controls(LRevControls, "L5 history and serial controls: turn accuracy",
		"Turn accuracy per model under the full history (the primary task), the time-stripped snapshot, the shuffled history and the serial conversation; the paired differences are in scores.md.",
		lRevPairings, []string{"Full history", "Snapshot", "Shuffled", "Serial"}, []string{LRev, LRevSnapshot, LRevShuffled, LRevSerial}, microAccuracy)
}

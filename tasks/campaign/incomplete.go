package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/send"
)

// ErrIncomplete is wrapped by Run's error when the run went to its end
// but some requests have no answer (not run: infrastructure failures, a
// model that could not be served; or missing from the journal), or some
// items of the dataset could not be made and were never asked. `npcorch
// run` exits with status 3 for it.
var ErrIncomplete = errors.New("the run is incomplete")

// incompleteError says how much of the run is missing and why.
type incompleteError struct {
	missing, total int
	leftOut        int // items of the dataset that could not be made
	// top is this run's most frequent reason a request was not run, n
	// how many it was; "" when this run made none of the missing.
	top string
	n   int
}

// Error is one line: `npcorch status` shows it from status.json, with no
// summary above it, so it names the most frequent reason itself.
func (e *incompleteError) Error() string {
	var parts []string
	if e.missing > 0 {
		why := "this run did not try them; scores.md says which"
		if e.top != "" {
			why = fmt.Sprintf("most often %d × %s; every reason in the run folder's events.log", e.n, trimReason(e.top))
		}
		parts = append(parts, fmt.Sprintf("%d of %d requests have no answer (%s); fix their cause and continue with --resume, which sends only what the journal lacks",
			e.missing, e.total, why))
	}
	if e.leftOut > 0 {
		parts = append(parts, fmt.Sprintf("%d item(s) of the dataset could not be made and were never asked (the item problems above, and in scores.md); fix the dataset and run again",
			e.leftOut))
	}
	return fmt.Sprintf("%v: %s", ErrIncomplete, strings.Join(parts, "; "))
}

func (e *incompleteError) Unwrap() error { return ErrIncomplete }

// checkComplete counts the (item, repeat) pairs of the scored run that
// have no answer and the dataset's items that could not be made, writes
// why this run did not answer them to w, and returns an incompleteError,
// or nil when everything is answered.
func checkComplete(res *score.Results, sums []send.Summary, w io.Writer) error {
	missing, total := 0, 0
	for _, m := range res.Models {
		missing += m.NotRun + m.Missing
		total += m.Answered + m.NotRun + m.Missing
	}
	leftOut := 0
	for _, it := range res.LeftOut {
		if it.Model == "" { // not made; the others are counted missing
			leftOut++
		}
	}
	if missing == 0 && leftOut == 0 {
		return nil
	}
	if w != nil {
		writeNotRun(w, sums)
	}
	e := &incompleteError{missing: missing, total: total, leftOut: leftOut}
	for _, g := range reasonGroups(sums) {
		if g.n > e.n {
			e.top, e.n = g.reason, g.n
		}
	}
	return e
}

// reasonGroup counts the not-run requests of one reason.
type reasonGroup struct {
	reason string
	n      int
}

// reasonGroups are the reasons of the summaries' not-run requests, over
// every model, most frequent first, then by reason.
func reasonGroups(sums []send.Summary) []reasonGroup {
	all := map[string]int{}
	for _, s := range sums {
		for r, n := range s.Reasons {
			all[r] += n
		}
	}
	return sortedGroups(all)
}

func sortedGroups(reasons map[string]int) []reasonGroup {
	var groups []reasonGroup
	for r, n := range reasons {
		groups = append(groups, reasonGroup{r, n})
	}
	slices.SortFunc(groups, func(a, b reasonGroup) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.reason, b.reason))
	})
	return groups
}

// maxReasonBytes trims a reason in the console summary; the journal keeps
// every failure whole.
const maxReasonBytes = 240

// writeNotRun writes this run's not-run requests grouped by reason, most
// frequent first, one block per model:
//
//	Lingshu-7B: 12 of 60 requests not run
//	  12 × rejected (HTTP 400): At most 5 image(s) may be provided …
func writeNotRun(w io.Writer, sums []send.Summary) {
	var b strings.Builder
	for _, s := range sums {
		if s.NotRun == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: %d of %d requests not run\n", s.Model, s.NotRun, s.Requests)
		for _, g := range sortedGroups(s.Reasons) {
			fmt.Fprintf(&b, "  %d × %s\n", g.n, trimReason(g.reason))
		}
	}
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nNot run, by reason (each request's failures are in the journal):\n%s", b.String())
	}
}

func trimReason(r string) string {
	r = strings.Join(strings.Fields(r), " ")
	if len(r) <= maxReasonBytes {
		return r
	}
	cut := maxReasonBytes
	for cut > 0 && !utf8Start(r[cut]) {
		cut--
	}
	return r[:cut] + " …"
}

// utf8Start reports whether b begins a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

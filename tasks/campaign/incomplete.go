package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks"
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
}

func (e *incompleteError) Error() string {
	var parts []string
	if e.missing > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d requests have no answer (reasons above); fix their cause and continue with --resume, which sends only what the journal lacks",
			e.missing, e.total))
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
func checkComplete(res *tasks.Results, sums []tasks.Summary, w io.Writer) error {
	missing, total := 0, 0
	for _, m := range res.Models {
		missing += m.NotRun + m.Missing
		total += m.Answered + m.NotRun + m.Missing
	}
	if missing == 0 && len(res.LeftOut) == 0 {
		return nil
	}
	if w != nil {
		writeNotRun(w, sums)
	}
	return &incompleteError{missing: missing, total: total, leftOut: len(res.LeftOut)}
}

// maxReasonBytes trims a reason in the console summary; the journal keeps
// every failure whole.
const maxReasonBytes = 240

// writeNotRun writes this run's not-run requests grouped by reason, most
// frequent first, one block per model:
//
//	Lingshu-7B: 12 of 60 requests not run
//	  12 × rejected (HTTP 400): At most 5 image(s) may be provided …
func writeNotRun(w io.Writer, sums []tasks.Summary) {
	var b strings.Builder
	for _, s := range sums {
		if s.NotRun == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: %d of %d requests not run\n", s.Model, s.NotRun, s.Requests)
		type group struct {
			reason string
			n      int
		}
		var groups []group
		for r, n := range s.Reasons {
			groups = append(groups, group{r, n})
		}
		slices.SortFunc(groups, func(a, b group) int {
			return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.reason, b.reason))
		})
		for _, g := range groups {
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

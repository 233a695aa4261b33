package npcbench

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// LRev is L5 longitudinal revision (prompt A4), the primary task: at each
// scored checkpoint of a trajectory, the full dated history up to it in
// one request, answered with one boxed option letter. Turn-micro accuracy
// and all-turn patient success (Eq. A2's AllCorrect). The paper: 305
// checkpoints over 100 trajectories of one to five. Its matched controls
// are l_rev_snapshot, l_rev_shuffled and l_rev_serial.
const LRev = "l_rev"

// lRevMix is an L5 request at the paper's scale: a history of about 46
// records, and the output allowance of the primary task, which its
// matched controls share.
var lRevMix = schedule.RequestMix{Requests: 305, TextTokens: 2500, MaxTokens: 8192}

func lRev() *tasks.Task {
	return &tasks.Task{
		Key: LRev, Level: "L5", Title: "Longitudinal revision, full history (L5, A4)",
		Cohort:      dataset.CohortLongitudinal,
		Build:       func(b *tasks.Builder) { buildCheckpoints(b, fullHistory) },
		Answer:      answerChoice,
		ScoredAlone: true,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(boxedStyle)},
		Paper:       lRevMix,
	}
}

// historyView lays out a checkpoint's history records for its prompt; id
// is the item's, for a view that shuffles.
type historyView func(id string, records []dataset.HistoryRecord) []tasks.HistorySection

// buildCheckpoints makes one item per checkpoint of every trajectory, its
// history as the view shows it, clustered by patient and grouped by the
// checkpoint's category.
func buildCheckpoints(b *tasks.Builder, view historyView) {
	for i := range b.Raw().Longitudinal {
		t := &b.Raw().Longitudinal[i]
		for j := range t.Checkpoints {
			if it, ok := checkpointItem(b, t, j); ok {
				it.Question.History = view(it.ID, t.History(&t.Checkpoints[j]))
				b.Add(it)
			}
		}
	}
}

// checkpointItem is the item of a trajectory's j-th checkpoint, without
// its history; a checkpoint that cannot be asked is reported.
func checkpointItem(b *tasks.Builder, t *dataset.Trajectory, j int) (tasks.Item, bool) {
	c := &t.Checkpoints[j]
	id := b.ItemID(t.Patient, c.ID)
	reason := ""
	switch {
	case !ordered(t):
		reason = "the trajectory's records or checkpoints are not in clinical order, so its history cannot be cut at the checkpoint"
	case c.Multiple:
		reason = "L5 checkpoints are single choice (prompt A4 asks for exactly one option letter)"
	}
	it, bad := choiceItem(id, t.Patient, &c.Choice, "", c.Category)
	if reason == "" {
		reason = bad
	}
	if reason != "" {
		b.Problem(id, reason)
		return tasks.Item{}, false
	}
	it.Question.Baseline, it.Question.Current = t.Baseline, c.Current
	return it, true
}

// ordered reports whether the records' days do not decrease and the
// checkpoints' days increase.
func ordered(t *dataset.Trajectory) bool {
	for k := 1; k < len(t.Records); k++ {
		if t.Records[k].Day < t.Records[k-1].Day {
			return false
		}
	}
	for k := 1; k < len(t.Checkpoints); k++ {
		if t.Checkpoints[k].Day <= t.Checkpoints[k-1].Day {
			return false
		}
	}
	return true
}

// marked is a record's line in the full history: its time marker, then
// the record.
func marked(r dataset.HistoryRecord) string {
	marker := r.Marker
	if marker == "" {
		marker = fmt.Sprintf("Day %d", r.Day)
	}
	return marker + "; " + r.Text
}

// sections groups lines under titles in order of first appearance.
func sections(records []dataset.HistoryRecord, title func(dataset.HistoryRecord) string, line func(dataset.HistoryRecord) string) []tasks.HistorySection {
	var out []tasks.HistorySection
	for _, r := range records {
		k := slices.IndexFunc(out, func(s tasks.HistorySection) bool { return s.Title == title(r) })
		if k < 0 {
			k = len(out)
			out = append(out, tasks.HistorySection{Title: title(r)})
		}
		out[k].Lines = append(out[k].Lines, line(r))
	}
	return out
}

// fullHistory is the primary condition: every record in clinical order
// within its section, with its time marker.
func fullHistory(_ string, records []dataset.HistoryRecord) []tasks.HistorySection {
	return sections(records, func(r dataset.HistoryRecord) string { return r.Section }, marked)
}

// lRevColumns are Table 1's L5 Turn and All-turn.
func lRevColumns() []score.Column {
	return []score.Column{
		choiceColumn("Turn", "L5", LRev, microAccuracy, microBaseline),
		choiceColumn("All-turn", "L5", LRev,
			func(ts *score.TaskScore) *score.Score { return orMicro(ts.AllCorrect, ts) },
			func(e score.Endpoints) *float64 { return orMicroBaseline(e.AllCorrect, e) }),
	}
}

// shuffleSeed seeds a deterministic shuffle from its names.
func shuffleSeed(parts ...string) *rand.Rand {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p + "\x00"))
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}

package live

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// accuracyNote says what the ACCURACY column counts, which is not always
// the measure the score files give a task.
const accuracyNote = "(ACCURACY: answered items right so far; the score files give each task the paper's measure: L4 per patient, L5 per turn and per trajectory, L3 structures as F1, O1 by its judge)"

// WriteText writes the snapshot as the terminal summary of `npcorch
// status`: the run, its models and tasks, its engines and GPUs.
func WriteText(w io.Writer, s *Snapshot) error {
	fmt.Fprintf(w, "campaign %s — %s", s.Campaign, s.State)
	if s.Error != "" {
		fmt.Fprintf(w, ": %s", s.Error)
	}
	fmt.Fprintf(w, "\nrun %s (pid %d on %s), started %s, %s elapsed, status of %s\n", s.RunDir, s.PID, s.Host,
		s.Started.Format(time.DateTime), fmtSeconds(s.ElapsedS), s.Updated.Format(time.DateTime))
	t := s.Totals
	fmt.Fprintf(w, "answered %d of %d, %d not run, %d remaining; accuracy so far %s; ETA %s (%s)\n\n",
		t.Answered, t.Requests, t.NotRun, t.Remaining, fmtAccuracy(t.Accuracy), fmtETA(s.ETA), s.ETA.Basis)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MODEL / TASK\tSTATE\tANSWERED\tNOT RUN\tINVALID\tREMAINING\tACCURACY\tTOKENS/S\tETA\t")
	for _, m := range s.Models {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%d\t%s\t%.0f\t%s\t\n", m.Model, m.State, m.Answered, m.Requests, m.NotRun, m.Invalid,
			m.Remaining, fmtAccuracy(m.Accuracy), m.TokensPerS, fmtETA(m.ETA))
		for _, k := range m.Tasks {
			fmt.Fprintf(tw, "  %s\t\t%d/%d\t%d\t%d\t%d\t%s\t\t\t\n", k.Task, k.Answered, k.Requests, k.NotRun, k.Invalid, k.Remaining, fmtAccuracy(k.Accuracy))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Models) > 0 {
		fmt.Fprintln(w, accuracyNote)
	}
	for _, m := range s.Models {
		switch {
		case m.Note != "":
			fmt.Fprintf(w, "%s: %s\n", m.Model, m.Note)
		case m.PlannedStartS != nil:
			fmt.Fprintf(w, "%s: waiting; the plan starts it at %s\n", m.Model, fmtSeconds(*m.PlannedStartS))
		}
	}
	writeEngines(w, s.Engines)
	writeGPUs(w, s.GPUs)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func writeEngines(w io.Writer, engines []Engine) {
	if len(engines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nengines:")
	for _, e := range engines {
		fmt.Fprintf(w, "  %s/r%d on GPUs %s: %s since %s, %d restart(s)", e.Model, e.Replica, joinInts(e.GPUs), e.State,
			e.Since.Format(time.TimeOnly), e.Restarts)
		if e.Error != "" {
			fmt.Fprintf(w, "; last error: %s", e.Error)
		}
		fmt.Fprintln(w)
		for _, l := range e.ErrorLines {
			fmt.Fprintf(w, "      | %s\n", l)
		}
	}
}

func writeGPUs(w io.Writer, g GPUs) {
	if !g.Sampled {
		if g.Note != "" {
			fmt.Fprintf(w, "\nGPUs not sampled: %s\n", g.Note)
		}
		return
	}
	fmt.Fprintln(w, "\nGPUs:")
	for _, d := range g.Devices {
		util := "-"
		if d.UtilPercent != nil {
			util = fmt.Sprintf("%.0f %%", *d.UtilPercent)
		}
		mem := "-"
		if d.MemUsedBytes != nil && d.MemTotalBytes != nil {
			mem = fmt.Sprintf("%d / %d MiB", *d.MemUsedBytes>>20, *d.MemTotalBytes>>20)
		}
		fmt.Fprintf(w, "  GPU %d: utilization %s, memory %s\n", d.Index, util, mem)
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func fmtAccuracy(a *float64) string {
	if a == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100**a)
}

func fmtETA(e ETA) string {
	if e.RemainingS == nil {
		return "-"
	}
	return fmtSeconds(*e.RemainingS)
}

// fmtSeconds writes a duration as "2h05m", "12m30s" or "45s".
func fmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/score"
)

func (r *Report) campaign() string { return r.Runs[0].Results.Campaign }

// tablePage is table1.md: the cross-model table and how to read it.
func (r *Report) tablePage() *page {
	p := &page{Title: "NPCBench Table 1: " + r.campaign()}
	r.tableSection(p)
	return p
}

func (r *Report) tableSection(p *page) {
	compare := len(r.Runs) > 1
	if compare {
		p.para("Runs side by side, model by model: %s is the base run; %s compared with it.", r.Table.Runs[0], strings.Join(r.Table.Runs[1:], ", "))
	} else {
		p.para("Run %s: %d model(s), %d repeat(s).", r.Runs[0].Name, len(r.Runs[0].Results.Models), max(r.Runs[0].Results.Repeats, 1))
	}
	g := &grid{RowHead: true, Head: []string{"Model"}}
	if compare {
		g.Head = append(g.Head, "Run")
	}
	for _, c := range r.Table.Columns {
		g.Head = append(g.Head, c.Level+" "+c.Name)
	}
	g.Head = append(g.Head, "answered", "not run", "missing")
	for _, row := range r.Table.Rows {
		cells := []gridCell{txt(row.Model)}
		if compare {
			cells = append(cells, txt(row.Run))
		}
		for _, c := range row.Cells {
			cells = append(cells, c.cell())
		}
		cells = append(cells, num(strconv.Itoa(row.Answered)), num(strconv.Itoa(row.NotRun)), num(strconv.Itoa(row.Missing)))
		class := ""
		if compare && !row.Base {
			class = "sub"
		}
		g.row(class, cells...)
	}
	base := []gridCell{txt("majority baseline (this cohort)")}
	if compare {
		base = append(base, txt(r.Table.Runs[0]))
	}
	for _, b := range r.Table.Baselines {
		if b == nil {
			base = append(base, gridCell{Text: "–", Class: "na"})
		} else {
			base = append(base, num(baselineText(b)))
		}
	}
	g.row("baseline", append(base, txt(""), txt(""), txt(""))...)
	p.tables(g)
	opt := r.Runs[0].Results.Options
	level, draws := opt.Level, opt.Draws
	if level == 0 {
		level = score.DefaultLevel
	}
	if draws == 0 {
		draws = score.DefaultDraws
	}
	p.note(fmt.Sprintf("Percent accuracy with %.0f %% intervals: exact Clopper–Pearson where each patient contributes one outcome (Strict; a task with one item per patient), otherwise a patient-cluster bootstrap (%d draws, seed %d). "+
		"A * marks a provisional score: some of its items were not run (infrastructure failures), so the run is incomplete. –: not run.",
		100*level, draws, opt.Seed))
	if compare {
		p.note("Compared rows: Δ in percentage points against the base run's score for the same model, shaded (bold in Markdown) where the printed value differs; † where the two intervals do not overlap.")
	}
	pb := paperBaselines()
	p.note(fmt.Sprintf("Paper baselines: L3 pathology majority %.1f %%, T majority %.1f %%, N majority %.1f %%, CarePath pathology %.0f %%, CarePath constant T3 %.0f %%. A constant answer's balanced accuracy is 100/K.",
		pb.L3Pathology, pb.TStage, pb.NStage, pb.CarePathPathology, pb.CarePathT3Constant))
	r.rubricSection(p)
}

// costPage is cost.md.
func (r *Report) costPage() *page {
	p := &page{Title: "Cost: " + r.campaign()}
	r.costSection(p)
	return p
}

func (r *Report) costSection(p *page) {
	p.para("Requests and tokens from the journal (the last attempt of each request; attempts count retries). Work tokens are prompt tokens not served from the prefix cache plus completion tokens; \"not reported\" means the engine did not report cached tokens for every answer (vLLM reports them only when started with --enable-prompt-tokens-details), never that none were cached. Latencies are client-side: TTFT to the first content chunk and TPOT per output token after the first, in milliseconds; E2E the whole request, in seconds.")
	for _, run := range r.Runs {
		g := &grid{RowHead: true, Caption: "Requests, tokens and latency", Head: []string{"Model", "Task", "requests", "not run", "attempts",
			"prompt tok.", "completion tok.", "cached tok.", "work tok.", "TTFT p50 / p90 / p99", "TPOT p50 / p90 / p99",
			"E2E p50 / p90 / p99 (s)"}}
		if len(r.Runs) > 1 {
			g.Caption += ", run " + run.Name
		}
		for _, t := range r.Cost.Tasks {
			if t.Run != run.Name {
				continue
			}
			class, model := "", t.Model
			if t.Task == AllTasks {
				class = "total"
			}
			g.row(class, txt(model), txt(t.Task), num(count(t.Requests)), num(count(t.NotRun)),
				num(count(t.Attempts)), num(count(t.PromptTokens)), num(count(t.CompletionTokens)), reported(t.CachedTokens),
				reported(t.WorkTokens), latency(t.TTFT, ms), latency(t.TPOT, ms), latency(t.E2E, seconds))
		}
		if len(g.Rows) == 0 {
			p.note("Run " + run.Name + ": the journal has no records, so request cost is unknown.")
			continue
		}
		p.tables(g)
	}
	g := &grid{RowHead: true, Caption: "GPU cost per model (from the launcher's model spans and the GPU sampler)",
		Head: []string{"Model", "spans", "GPU-seconds", "GPU-hours", "energy (Wh)", "mean GPU util. (%)", "peak memory (GiB)"}}
	if len(r.Runs) > 1 {
		g.Head = append([]string{"Model", "Run"}, g.Head[1:]...)
	}
	for _, c := range r.Cost.GPU {
		cells := []gridCell{txt(c.Model)}
		if len(r.Runs) > 1 {
			cells = append(cells, txt(c.Run))
		}
		hours := optNum(c.GPUSeconds, func(v float64) string { return fmt.Sprintf("%.2f", v/3600) })
		cells = append(cells, num(strconv.Itoa(c.Spans)),
			optNum(c.GPUSeconds, func(v float64) string { return fmt.Sprintf("%.0f", v) }), hours,
			optNum(c.EnergyWh, func(v float64) string { return fmt.Sprintf("%.2f", v) }),
			optNum(c.MeanGPUUtilPercent, func(v float64) string { return fmt.Sprintf("%.1f", v) }),
			optNum(bytesF(c.PeakMemUsedBytes), func(v float64) string { return fmt.Sprintf("%.1f", v/(1<<30)) }))
		g.row("", cells...)
	}
	p.tables(g)
	p.note("GPU-seconds are the GPUs a model's engines held times how long they held them; energy comes from the driver's energy counters over the same spans. \"not measured\": the run recorded no span for the model or the sampler did not run; never read it as zero. NVML utilization is the share of time some kernel ran, not SM load.")
	r.speedSection(p)
}

// speedSection shows what the engines were measured to do, when a run
// measured them (its speeds.json).
func (r *Report) speedSection(p *page) {
	if len(r.Cost.Speeds) == 0 {
		return
	}
	g := &grid{RowHead: true, Caption: "Measured engine speeds (the run's speeds.json)",
		Head: []string{"Model", "samples", "serving (s)", "registry tok/s", "measured tok/s", "factor (95 %)", "images/s", "TTFT (s)"}}
	if len(r.Runs) > 1 {
		g.Head = append([]string{"Model", "Run"}, g.Head[1:]...)
	}
	f := func(format string, v float64) gridCell {
		if v <= 0 {
			return txt("–")
		}
		return num(fmt.Sprintf(format, v))
	}
	for _, s := range r.Cost.Speeds {
		rows := [][]gridCell{{txt(s.Model)}}
		images := 0.0
		if s.Seconds > 0 {
			images = s.Images / s.Seconds
		}
		rows[0] = append(rows[0], num(strconv.Itoa(s.Samples)), f("%.0f", s.Seconds), f("%.0f", s.RegistryTokensPerS), f("%.0f", s.TokensPerS),
			num(fmt.Sprintf("%.2f× (%.2f–%.2f)", s.Factor, s.Low, s.High)), f("%.1f", images), f("%.2f", s.TTFT))
		for _, rep := range s.Replicas {
			rows = append(rows, []gridCell{txt(fmt.Sprintf("%s, replica %d (TP%d)", s.Model, rep.Replica, rep.TP)), num(strconv.Itoa(rep.Samples)),
				f("%.0f", rep.Seconds), txt(""), f("%.0f", rep.TokensPerS), txt(""), f("%.1f", rep.ImagesPerS), f("%.2f", rep.TTFT)})
		}
		for _, cells := range rows {
			if len(r.Runs) > 1 {
				cells = append(cells[:1], append([]gridCell{txt(s.Run)}, cells[1:]...)...)
			}
			g.row("", cells...)
		}
	}
	p.tables(g)
	p.note("Token equivalents are prompt tokens plus the decode cost of output tokens, per second of serving per A800-equivalent; the measured speed is the scheduler's estimate, shrunk towards the node's other models while samples are few, with its 95 % interval. Replica rows show what each replica served per second, sharing its GPUs or not. `npcorch calibrate --run DIR` turns these into registry speeds for the next campaign.")
}

func bytesF(v *uint64) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}

func optNum(v *float64, format func(float64) string) gridCell {
	if v == nil {
		return gridCell{Text: notMeasured, Class: "na"}
	}
	return num(format(*v))
}

// latency prints "p50 / p90 / p99" in the given unit.
// reported prints a token figure the engine may not have reported.
func reported(v *int) gridCell {
	if v == nil {
		return gridCell{Text: notReported, Class: "na"}
	}
	return num(count(*v))
}

func latency(p Percentiles, unit func(*float64) gridCell) gridCell {
	if p.N == 0 {
		return gridCell{Text: "–", Class: "na"}
	}
	return num(unit(p.P50).Text + " / " + unit(p.P90).Text + " / " + unit(p.P99).Text)
}

// seconds prints milliseconds as seconds with one decimal.
func seconds(v *float64) gridCell {
	if v == nil {
		return gridCell{Text: "–", Class: "na"}
	}
	return num(fmt.Sprintf("%.1f", *v/1000))
}

func ms(v *float64) gridCell {
	if v == nil {
		return gridCell{Text: "–", Class: "na"}
	}
	if *v >= 100 {
		return num(fmt.Sprintf("%.0f", *v))
	}
	return num(fmt.Sprintf("%.1f", *v))
}

// count prints an integer with thousands separators: 1234567 → 1,234,567.
func count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// detailPage is detail.md.
func (r *Report) detailPage() *page {
	p := &page{Title: "Per-model detail: " + r.campaign() + " (run " + r.Runs[0].Name + ")"}
	r.detailSection(p)
	return p
}

func (r *Report) detailSection(p *page) {
	for _, d := range r.Detail {
		p.heading(2, "model-"+slug(d.Model), d.Model)
		m := d.Scores
		if m == nil {
			p.note("scores.json has no scores for this model; only its journal records are shown.")
		} else {
			p.para("%d answered, %d not run (infrastructure failures), %d missing (never attempted), counting (item, repeat) pairs.", m.Answered, m.NotRun, m.Missing)
			ts := taskScores(r.reg, m)
			taskTable(p, ts)
			classTables(p, ts)
			sliceTables(p, ts)
			evidenceTable(p, m.Evidence)
			carePathTables(p, m.CarePath)
			controlsTable(p, m.Controls)
			reliabilityTable(p, r.reg, m.Reliability)
		}
		extractionTable(p, d.Extraction)
		slowTable(p, d.Slowest)
		notRunTable(p, d.NotRun)
	}
}

func scoreOf(s *score.Score, provisional bool) gridCell {
	if s == nil {
		return scoreCell(nil, nil, false)
	}
	return scoreCell(s, score.ShownInterval(s), provisional)
}

func taskTable(p *page, ts []taskScore) {
	if len(ts) == 0 {
		return
	}
	p.heading(3, "", "Scores by task")
	g := &grid{RowHead: true, Head: []string{"Task", "units", "patients", "accuracy", "balanced acc.", "group-macro", "patient-macro", "AllCorrect",
		"majority", "not run", "failed extr."}}
	for _, t := range ts {
		s := t.Score
		prov := !s.Complete
		fails := 0
		for _, f := range s.Failures {
			fails += f.Count
		}
		base := gridCell{Text: "–", Class: "na"}
		if s.Majority != nil {
			base = num(fmt.Sprintf("%s (%s)", pct(s.Majority.Percent), s.Majority.Class))
		}
		g.row("", txt(t.Title), num(strconv.Itoa(s.Units)), num(strconv.Itoa(s.Patients)), scoreOf(s.Accuracy, prov),
			scoreOf(s.Balanced, prov), scoreOf(s.GroupMacro, prov), scoreOf(s.PatientMacro, prov), scoreOf(s.AllCorrect, prov), base,
			num(strconv.Itoa(s.NotRun)), num(strconv.Itoa(fails)))
	}
	p.tables(g)
	p.note("Majority: what always answering the cohort's most frequent class scores (its balanced accuracy is 100/K). Group-macro is the mean of the groups' accuracies (L2's main score, Eq. A1); patient-macro and AllCorrect apply where a patient has several items (L4's main score is patient-macro, Eq. A2; L5's all-turn success is AllCorrect).")
}

// sliceTables are the per-group and per-tag accuracies of the closed-choice
// tasks: L1 by guideline source, L2 by capability group, L4 and L5 by
// category.
func sliceTables(p *page, ts []taskScore) {
	first := true
	for _, t := range ts {
		s := t.Score
		for _, part := range []struct {
			kind   string
			slices []score.Slice
		}{{"group", s.Groups}, {"tag", s.Tags}} {
			if len(part.slices) == 0 {
				continue
			}
			if first {
				p.heading(3, "", "Accuracy by group and tag")
				first = false
			}
			g := &grid{Caption: t.Title + " by " + part.kind, RowHead: true, Head: []string{part.kind, "units", "accuracy"}}
			for _, sl := range part.slices {
				g.row("", txt(sl.Name), num(strconv.Itoa(sl.Units)), scoreOf(sl.Accuracy, !s.Complete))
			}
			p.tables(g)
		}
	}
}

func classTables(p *page, ts []taskScore) {
	first := true
	for _, t := range ts {
		s := t.Score
		if len(s.Classes) == 0 || s.Confusion == nil {
			continue
		}
		if first {
			p.heading(3, "", "Class diagnostics and confusion matrices")
			first = false
		}
		cls := &grid{Caption: t.Title, RowHead: true, Head: []string{"class", "support", "predicted", "TP", "FP", "FN", "recall", "precision", "F1"}}
		for _, c := range s.Classes {
			cls.row("", txt(c.Class), num(strconv.Itoa(c.Support)), num(strconv.Itoa(c.Predicted)), num(strconv.Itoa(c.TP)),
				num(strconv.Itoa(c.FP)), num(strconv.Itoa(c.FN)), optPct(c.Recall), optPct(c.Precision), optPct(c.F1))
		}
		cm := &grid{Caption: "Confusion (rows: gold, columns: answer)", RowHead: true, Head: append([]string{"gold \\ answer"}, s.Confusion.Columns...)}
		for i, row := range s.Confusion.Counts {
			cells := []gridCell{txt(s.Confusion.Classes[i])}
			for _, n := range row {
				cells = append(cells, num(strconv.Itoa(n)))
			}
			cm.row("", cells...)
		}
		p.tables(cls, cm)
	}
}

func optPct(v *float64) gridCell {
	if v == nil {
		return gridCell{Text: "–", Class: "na"}
	}
	return num(pct(*v))
}

func evidenceTable(p *page, ev *score.EvidenceScore) {
	if ev == nil {
		return
	}
	p.heading(3, "", "Anatomical panel")
	prov := !ev.Complete
	g := &grid{RowHead: true, Head: []string{"diagnostic", "score", "numerator / denominator", "what it measures"}}
	rows := []struct {
		name string
		s    *score.Score
		what string
	}{
		{"Structure", ev.Structure, "cards whose structure is named right (card-micro)"},
		{"Invasion | structure", ev.InvasionGivenStructure, "invasion right among cards with the right structure"},
		{"Joint", ev.Joint, "structure and invasion both right"},
		{"Pt.Inv", ev.PtInv, "mean over patients of the 18 invasion labels right"},
		{"Complete Inv", ev.CompleteInv, "patients with all 18 invasion labels right"},
		{"Direct T", ev.DirectT, "T stage answered from the 27 cards"},
		{"EG T", ev.EGT, "Complete Inv and Direct T both right"},
		{"Oracle-slot T", ev.OracleSlotT, "T rule on predicted invasion in the gold structure slots"},
		{"Model-slot T", ev.ModelSlotT, "T rule on predicted invasion in the predicted structure slots"},
		{"Gold-evidence rule T", ev.GoldRuleT, "T rule on the gold findings (the rule's ceiling)"},
	}
	for _, row := range rows {
		frac := gridCell{Text: "–", Class: "na"}
		if row.s != nil {
			frac = num(fmt.Sprintf("%s / %d", trimFloat(row.s.Numerator), row.s.Denominator))
		}
		g.row("", txt(row.name), scoreOf(row.s, prov), frac, txt(row.what))
	}
	p.tables(g)
	p.note(fmt.Sprintf("%d patients, %d cards scored, %d requests not run.", ev.Patients, ev.Cards, ev.NotRun))
}

// trimFloat prints a count without decimals and a sum of fractions with two.
func trimFloat(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return fmt.Sprintf("%.2f", v)
}

func carePathTables(p *page, cp *score.CarePathScore) {
	if cp == nil {
		return
	}
	p.heading(3, "", "CarePath (L6)")
	prov := !cp.Complete
	g := &grid{RowHead: true, Head: []string{"endpoint", "score", "numerator / denominator"}}
	for _, row := range []struct {
		name string
		s    *score.Score
	}{
		{"Care", cp.Care}, {"Care, patient-macro", cp.CarePatientMacro}, {"All-care", cp.AllCare},
		{"Strict", cp.Strict}, {"Pathology ∧ T", cp.PathologyAndT},
	} {
		frac := gridCell{Text: "–", Class: "na"}
		if row.s != nil {
			frac = num(fmt.Sprintf("%s / %d", trimFloat(row.s.Numerator), row.s.Denominator))
		}
		g.row("", txt(row.name), scoreOf(row.s, prov), frac)
	}
	in := cp.Intersections
	x := &grid{Caption: "Patient intersections (complete episodes)", RowHead: true, Head: []string{"", "pathology ∧ T right", "pathology or T wrong"}}
	x.row("", txt("all care right"), num(fmt.Sprintf("n11 = %d", in.N11)), num(fmt.Sprintf("n10 = %d", in.N10)))
	x.row("", txt("some care wrong"), num(fmt.Sprintf("n01 = %d", in.N01)), num(fmt.Sprintf("n00 = %d", in.N00)))
	p.tables(g, x)
	p.note(fmt.Sprintf("%d patients (%d with every request answered), %d care decisions scored, %d excluded, %d requests not run. Strict = n11 / scored patients.",
		cp.Patients, cp.Scored, cp.Decisions, cp.Excluded, cp.NotRun))
}

func reliabilityTable(p *page, reg *tasks.Registry, rel []score.TaskReliability) {
	if len(rel) == 0 {
		return
	}
	p.heading(3, "", "Repeated runs")
	g := &grid{RowHead: true, Head: []string{"task", "k", "items", "dropped", "avg@k", "SD", "pass^k", "pass@k", "agreement"}}
	for _, t := range rel {
		r := t.Reliability
		title := taskTitle(reg, t.Task)
		if t.Field != "" {
			title += " (" + t.Field + ")"
		}
		g.row("", txt(title), num(strconv.Itoa(r.K)), num(strconv.Itoa(r.Items)), num(strconv.Itoa(r.Dropped)),
			scoreOf(r.AvgAtK, !r.Complete), num(pct(r.SD)), scoreOf(r.PassHatK, !r.Complete), scoreOf(r.PassAtK, !r.Complete),
			scoreOf(r.Agreement, !r.Complete))
	}
	p.tables(g)
}

func extractionTable(p *page, ex []ExtractionFailures) {
	p.heading(3, "", "Failed extractions")
	if len(ex) == 0 {
		p.note("None: every answered request gave a valid category.")
		return
	}
	g := &grid{RowHead: true, Head: []string{"task", "kind", "count"}}
	for _, e := range ex {
		for _, f := range e.Failures {
			g.row("", txt(e.Task), txt(string(f.Kind)), num(strconv.Itoa(f.Count)))
		}
	}
	p.tables(g)
	p.note("A failed extraction is scored wrong and stays in every denominator.")
}

func slowTable(p *page, items []SlowItem) {
	if len(items) == 0 {
		return
	}
	p.heading(3, "", fmt.Sprintf("Slowest items (top %d by end-to-end latency)", SlowestItems))
	g := &grid{RowHead: true, Head: []string{"item", "task", "repeat", "E2E (ms)", "TTFT (ms)", "completion tok.", "finish"}}
	for _, it := range items {
		g.row("", txt(it.Item), txt(it.Task), num(strconv.Itoa(it.Repeat)), ms(&it.E2Ems), ms(&it.TTFTms),
			num(count(it.CompletionTokens)), txt(it.FinishReason))
	}
	p.tables(g)
}

func notRunTable(p *page, items []NotRunItem) {
	p.heading(3, "", "Not-run items")
	if len(items) == 0 {
		p.note("None: every request in the journal was answered.")
		return
	}
	g := &grid{RowHead: true, Head: []string{"item", "task", "patient", "repeat", "attempts", "failures"}}
	for _, it := range items {
		g.row("", txt(it.Item), txt(it.Task), txt(it.Patient), num(strconv.Itoa(it.Repeat)), num(strconv.Itoa(it.Attempts)),
			txt(strings.Join(it.Failures, "; ")))
	}
	p.tables(g)
	p.note("Not-run items failed for infrastructure reasons; their scores are provisional (*) until a resumed run answers them.")
}

// fullPage is report.html: everything on one page.
func (r *Report) fullPage() *page {
	p := &page{Title: "npcorch report: " + r.campaign()}
	for _, run := range r.Runs {
		for _, n := range run.Notes {
			p.note("Run " + run.Name + ": " + n)
		}
	}
	p.heading(1, "table1", "Table 1")
	r.tableSection(p)
	var scores, classes, timeline []figure
	for _, f := range r.figures {
		switch {
		case strings.HasPrefix(f.File, PlotsDir+"/recall_"):
			classes = append(classes, f)
		case f.File == PlotsDir+"/"+gpu.ReportTimelineFile:
			timeline = append(timeline, f)
		default:
			scores = append(scores, f)
		}
	}
	if len(scores) > 0 {
		p.heading(1, "plots", "Scores")
		p.figures(scores...)
	}
	if len(classes) > 0 {
		p.heading(1, "recall", "Per-class recall")
		p.figures(classes...)
	}
	p.heading(1, "cost", "Cost")
	r.costSection(p)
	if len(timeline) > 0 {
		p.figures(timeline...)
	} else {
		p.note("GPU utilization timeline: not measured (the run has no " + SamplesFile + ").")
	}
	p.heading(1, "detail", "Per-model detail (run "+r.Runs[0].Name+")")
	r.detailSection(p)
	return p
}

// controlsTable is the model's matched controls (L5 history and serial,
// L6 image evidence and serial): each endpoint under both conditions and
// the paired difference with its interval.
func controlsTable(p *page, cs []score.Comparison) {
	if len(cs) == 0 {
		return
	}
	p.heading(3, "", "Matched controls")
	g := &grid{RowHead: true, Head: []string{"control", "units / patients", "item accuracy", "patient-macro", "all-correct", "+/− (Φ)", "B/W/S"}}
	for _, c := range cs {
		name := c.Name
		if !c.Complete {
			name += " *"
		}
		g.row("", txt(name), num(fmt.Sprintf("%d / %d", c.Units, c.Patients)), pairedText(c.Micro), pairedText(c.PatientMacro),
			pairedText(c.AllCorrect), num(fmt.Sprintf("%d/%d (%s)", c.Corrected, c.Harmed, pct(c.Flip))),
			num(fmt.Sprintf("%d/%d/%d", c.Better, c.Worse, c.Same)))
	}
	p.tables(g)
	p.note("Each endpoint is baseline → treatment, then the difference (treatment − baseline, pp) with its paired patient-cluster bootstrap interval; +/− count units corrected and harmed, Φ the percentage whose correctness changed (Eq. A6); B/W/S count patients whose accuracy rose, fell or stayed (Table A23). *: some units were not run.")
}

// pairedText is "62.5 → 70.0: +7.5 [1.2, 13.8]"; – when not scored.
func pairedText(pe score.Paired) gridCell {
	if pe.Baseline == nil || pe.Treatment == nil {
		return gridCell{Text: "–", Class: "na"}
	}
	out := fmt.Sprintf("%s → %s: %+.1f", pct(pe.Baseline.Percent), pct(pe.Treatment.Percent), pe.Difference)
	if pe.Interval != nil {
		out += fmt.Sprintf(" [%.1f, %.1f]", pe.Interval.Lower, pe.Interval.Upper)
	}
	return num(out)
}

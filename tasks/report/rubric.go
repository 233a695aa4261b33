package report

import (
	"fmt"
	"strconv"

	"github.com/npcorch/npcorch/tasks/score"
)

// rubricSection adds O1's judged scores, model by judge, and the judges'
// calibration against physicians, for each run that has them.
func (r *Report) rubricSection(p *page) {
	o1 := &grid{RowHead: true, Head: []string{"Model", "Run", "Judge", "Score", "Case mean", "Major error", "Minor error", "in V", "fell out"}}
	cal := &grid{RowHead: true, Head: []string{"Judge", "Run", "Kind", "Labels", "Agreement", "κ", "Sensitivity", "Specificity", "TP", "FP", "TN", "FN"}}
	for _, run := range r.Runs {
		for _, m := range run.Results.Models {
			for _, jr := range m.Rubric {
				s := jr.Score
				o1.row("", txt(m.Model), txt(run.Name), txt(jr.Judge), rubricCell(s.Score, s.Complete), rubricCell(s.CaseMean, s.Complete),
					rubricCell(s.Major, s.Complete), rubricCell(s.Minor, s.Complete), num(fmt.Sprintf("%d of %d", s.Valid, s.Items)), txt(score.ReasonsText(s.FellOut)))
			}
		}
		for _, j := range run.Results.Judges {
			c := j.Calibration
			cal.row("", agreementCells(j.Judge, run.Name, "all", c.All)...)
			for _, k := range c.ByKind {
				cal.row("sub", agreementCells(j.Judge, run.Name, k.Kind, k.Agreement)...)
			}
		}
	}
	if len(o1.Rows) > 0 {
		p.heading(2, "o1", "O1 ConsultRubrics")
		p.tables(o1)
		p.note("Eq. A7: 100 · max(0, Σ weights of the requirements met − 2 · majors − minors) / points, averaged over the items with a valid verdict on every criterion (V); case mean within each case, then across cases; error rates: share of items with at least one error of that kind; case-cluster bootstrap intervals.")
	}
	if len(cal.Rows) > 0 {
		p.heading(2, "calibration", "Judge calibration")
		p.tables(cal)
		p.note("Each judge against the physicians' labels of the audit responses (Eq. A9): agreement (response-cluster bootstrap), Cohen's κ, sensitivity and specificity with the physicians as reference.")
	}
}

func rubricCell(s *score.Score, complete bool) gridCell {
	if s == nil {
		return gridCell{Text: "–", Class: "na"}
	}
	out := strconv.FormatFloat(s.Percent, 'f', 1, 64)
	if iv := score.ShownInterval(s); iv != nil {
		out += fmt.Sprintf(" [%.1f–%.1f]", iv.Lower, iv.Upper)
	}
	if !complete {
		out += "*"
	}
	return num(out)
}

func agreementCells(judge, run, kind string, a score.Agreement) []gridCell {
	return []gridCell{txt(judge), txt(run), txt(kind), num(strconv.Itoa(a.N)), rubricCell(a.Percent, true), num(score.RatioText(a.Kappa)),
		num(score.RatioText(a.Sensitivity)), num(score.RatioText(a.Specificity)), num(strconv.Itoa(a.TP)), num(strconv.Itoa(a.FP)), num(strconv.Itoa(a.TN)), num(strconv.Itoa(a.FN))}
}

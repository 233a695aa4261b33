package score

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// writeRubric writes the judged free-text scores (O1) under each judge
// and the judges' calibration against physicians, when the run has them.
func (r *Results) writeRubric(b *bytes.Buffer) {
	var rows int
	for _, m := range r.Models {
		rows += len(m.Rubric)
	}
	if rows > 0 {
		b.WriteString("\n## O1 ConsultRubrics\n\n")
		b.WriteString("| Model | Judge | Score | Case mean | Major error | Minor error | in V | fell out |\n|---|---|---|---|---|---|---|---|\n")
		for _, m := range r.Models {
			for _, jr := range m.Rubric {
				s := jr.Score
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d of %d | %s |\n", m.Model, jr.Judge, cell(s.Score, s.Complete),
					cell(s.CaseMean, s.Complete), cell(s.Major, s.Complete), cell(s.Minor, s.Complete), s.Valid, s.Items, ReasonsText(s.FellOut))
			}
		}
		b.WriteString("\nScore: Eq. A7, 100 · max(0, Σ weights of requirements met − 2 · majors − minors) / points, averaged over the items with a valid verdict on every criterion (V); case mean: within each case, then across cases; error rates: share of items with at least one error of that kind. Intervals: case-cluster bootstrap.\n")
		r.writeTags(b)
	}
	if len(r.Judges) == 0 {
		return
	}
	b.WriteString("\n## Judge calibration\n\n")
	b.WriteString("| Judge | Kind | Labels | Agreement | κ | Sensitivity | Specificity | TP | FP | TN | FN |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, j := range r.Judges {
		c := j.Calibration
		writeAgreement(b, j.Judge, "all", c.All)
		for _, k := range c.ByKind {
			writeAgreement(b, j.Judge, k.Kind, k.Agreement)
		}
		if len(c.Missing) > 0 {
			fmt.Fprintf(b, "| %s | without a valid verdict | %s | | | | | | | | |\n", j.Judge, ReasonsText(c.Missing))
		}
	}
	b.WriteString("\nAgainst the physicians' labels of the audit responses (Eq. A9): agreement with a response-cluster bootstrap interval, Cohen's κ, and the judge's sensitivity and specificity with the physicians as reference.\n")
}

// writeTags writes O1's score per clinical tag, a column per tag.
func (r *Results) writeTags(b *bytes.Buffer) {
	var tags []string
	for _, m := range r.Models {
		for _, jr := range m.Rubric {
			for _, t := range jr.Score.Tags {
				if t.Items > 0 && !slices.Contains(tags, t.Tag) {
					tags = append(tags, t.Tag)
				}
			}
		}
	}
	if len(tags) == 0 {
		return
	}
	fmt.Fprintf(b, "\n| Model | Judge | %s |\n|---|---|%s\n", strings.Join(tags, " | "), strings.Repeat("---|", len(tags)))
	for _, m := range r.Models {
		for _, jr := range m.Rubric {
			fmt.Fprintf(b, "| %s | %s |", m.Model, jr.Judge)
			for _, tag := range tags {
				var s *Score
				for _, t := range jr.Score.Tags {
					if t.Tag == tag {
						s = t.Score
					}
				}
				fmt.Fprintf(b, " %s |", cell(s, true))
			}
			b.WriteString("\n")
		}
	}
}

func writeAgreement(b *bytes.Buffer, judge, kind string, a Agreement) {
	fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %d | %d | %d | %d |\n", judge, kind, a.N, cell(a.Percent, true),
		RatioText(a.Kappa), RatioText(a.Sensitivity), RatioText(a.Specificity), a.TP, a.FP, a.TN, a.FN)
}

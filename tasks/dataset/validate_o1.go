package dataset

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// validateConsultations checks every case, question, criterion and
// audit label; each problem names the case, the question and the field.
func (r *Raw) validateConsultations() Problems {
	v := consultCheck{cases: map[string]bool{}, audits: map[string]string{}}
	for i := range r.Consultations {
		v.checkCase(i, &r.Consultations[i])
	}
	return v.ps
}

// consultCheck collects the problems of the consultations.
type consultCheck struct {
	ps     Problems
	cases  map[string]bool
	audits map[string]string // audit response id → where it was first seen
}

func (v *consultCheck) add(where, format string, args ...any) {
	v.ps = append(v.ps, Problem{Where: where, Reason: fmt.Sprintf(format, args...)})
}

// checkID checks the id of a question or criterion (what) against the ids
// already seen in its case or question (scope), and records it there.
func (v *consultCheck) checkID(where, what, scope, id string, seen map[string]bool) {
	switch {
	case id == "":
		v.add(where, "id: the %s has no id", what)
	case seen[id]:
		v.add(where, "id: duplicate %s id %q in this %s", what, id, scope)
	case strings.Contains(id, "/"):
		v.add(where, "id: %q contains '/', which item ids use as a separator", id)
	}
	seen[id] = true
}

func (v *consultCheck) checkCase(i int, c *ConsultCase) {
	where := fmt.Sprintf("consultations[%d] (%s)", i, c.ID)
	switch {
	case c.ID == "":
		v.add(where, "the case has no id")
	case v.cases[c.ID]:
		v.add(where, "duplicate case id %q; ids must be unique", c.ID)
	case strings.Contains(c.ID, "/"):
		v.add(where, "case id %q contains '/', which item ids use as a separator", c.ID)
	}
	v.cases[c.ID] = true
	if strings.TrimSpace(c.Case) == "" {
		v.add(where, "case: the case information is empty; the consultation prompt (A14) shows it")
	}
	if len(c.Questions) == 0 {
		v.add(where, "questions: the case has no question")
	}
	ids := map[string]bool{}
	for k := range c.Questions {
		q := &c.Questions[k]
		qw := fmt.Sprintf("%s: questions[%d] (%s)", where, k, q.ID)
		v.checkID(qw, "question", "case", q.ID, ids)
		v.checkQuestion(qw, q)
	}
}

func (v *consultCheck) checkQuestion(where string, q *ConsultQuestion) {
	if strings.TrimSpace(q.Question) == "" {
		v.add(where, "question: the question text is empty")
	}
	seen := map[string]bool{}
	for _, t := range q.Tags {
		if !slices.Contains(ConsultTags(), t) {
			v.add(where, "tags: unknown tag %q; use %s", t, strings.Join(ConsultTags(), ", "))
		} else if seen[t] {
			v.add(where, "tags: tag %q is given twice", t)
		}
		seen[t] = true
	}
	if len(q.Criteria) == 0 {
		v.add(where, "criteria: the question has no rubric criterion")
		return
	}
	ids := map[string]bool{}
	for k, c := range q.Criteria {
		cw := fmt.Sprintf("%s: criteria[%d] (%s)", where, k, c.ID)
		v.checkID(cw, "criterion", "question", c.ID, ids)
		checkCriterion(v, cw, c)
	}
	if b := q.Points(); !(b > 0) || math.IsInf(b, 0) {
		v.add(where, "criteria: the positive requirements' weights add up to %g; Eq. A7 divides by them (B_i, 10 points in the paper), so give at least one a positive weight", b)
	}
	for k := range q.Audit {
		v.checkAudit(fmt.Sprintf("%s: audit[%d] (%s)", where, k, q.Audit[k].ID), q, &q.Audit[k])
	}
}

func checkCriterion(v *consultCheck, where string, c Criterion) {
	if strings.TrimSpace(c.Text) == "" {
		v.add(where, "text: the criterion text is empty")
	}
	switch c.Kind {
	case KindPositive:
		if c.Weight < 0 || math.IsNaN(c.Weight) || math.IsInf(c.Weight, 0) {
			v.add(where, "weight: %g is not a number of points ≥ 0", c.Weight)
		}
		if c.Section != "" && !slices.Contains(CriterionSections(), c.Section) {
			v.add(where, "section: unknown section %q; use %s", c.Section, strings.Join(CriterionSections(), ", "))
		}
	case KindMajor, KindMinor:
		if c.Weight != 0 {
			v.add(where, "weight: a %s error criterion has no weight (it deducts %d point(s), Eq. A7); remove it", c.Kind, Deduction(c.Kind))
		}
		if c.Section != "" {
			v.add(where, "section: only positive requirements have a section; remove it")
		}
	default:
		v.add(where, "kind: unknown kind %q; use positive, major or minor", c.Kind)
	}
}

func (v *consultCheck) checkAudit(where string, q *ConsultQuestion, a *AuditResponse) {
	switch first, dup := v.audits[a.ID]; {
	case a.ID == "":
		v.add(where, "id: the audited response has no id")
	case dup:
		v.add(where, "id: audited response id %q is used already (%s); ids must be unique over the dataset", a.ID, first)
	case strings.Contains(a.ID, "/"):
		v.add(where, "id: %q contains '/', which item ids use as a separator", a.ID)
	default:
		v.audits[a.ID] = where
	}
	if strings.TrimSpace(a.Response) == "" {
		v.add(where, "response: the audited response is empty")
	}
	if len(a.Labels) == 0 {
		v.add(where, "labels: the response has no physician label")
	}
	seen := map[string]bool{}
	for _, l := range a.Labels {
		if _, ok := q.Criterion(l.Criterion); !ok {
			v.add(where, "labels: criterion %q is not one of the question's", l.Criterion)
		} else if seen[l.Criterion] {
			v.add(where, "labels: criterion %q is labelled twice", l.Criterion)
		}
		seen[l.Criterion] = true
	}
}

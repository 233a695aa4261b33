package dataset

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// O1 ConsultRubrics (the paper's §3.3, C.5.1, Appendix D): free-text
// consultations over cases, each question judged criterion by criterion.
// A dataset holds them in Raw.Consultations; docs/dataset.md shows the
// format.

// Clinical tags of a consultation question (Table A29's groups).
const (
	TagAE         = "AE"         // adverse-event management
	TagDx         = "Dx"         // diagnosis
	TagElderly    = "elderly"    // elderly patients
	TagPaediatric = "paediatric" // paediatric patients
	TagTx         = "Tx"         // treatment selection
	TagWorkup     = "workup"     // work-up
)

// ConsultTags lists the clinical tags in the order Table A29 reports them.
func ConsultTags() []string {
	return []string{TagAE, TagDx, TagElderly, TagPaediatric, TagTx, TagWorkup}
}

// Criterion kinds: a positive requirement earns its weight when met; a
// major or minor error criterion deducts two or one point when triggered
// (Eq. A7).
const (
	KindPositive = "positive"
	KindMajor    = "major"
	KindMinor    = "minor"
)

// CriterionKinds lists the kinds in report order.
func CriterionKinds() []string { return []string{KindPositive, KindMajor, KindMinor} }

// Sections of the positive requirements (Fig. 5d: "core answers,
// supporting evidence, and conditional requirements").
const (
	SectionCore        = "core"
	SectionEvidence    = "evidence"
	SectionConditional = "conditional"
)

// CriterionSections lists the sections in report order.
func CriterionSections() []string {
	return []string{SectionCore, SectionEvidence, SectionConditional}
}

// ConsultCase is one case of the O1 suite and the consultation questions
// asked about it.
type ConsultCase struct {
	// ID names the case; the case is the cluster O1's intervals resample.
	ID string `json:"id"`
	// Case is the de-identified case information (prompt A14's
	// [case_input]).
	Case      string            `json:"case"`
	Questions []ConsultQuestion `json:"questions"`
}

// ConsultQuestion is one O1 item: a question about its case, its
// clinical tags, its rubric, and optionally physicians' labels of
// responses to it.
type ConsultQuestion struct {
	ID       string      `json:"id"`
	Question string      `json:"question"`
	Tags     []string    `json:"tags,omitempty"`
	Criteria []Criterion `json:"criteria"`
	// Audit holds responses physicians labelled criterion by criterion:
	// the judges judge them too, and are calibrated against the labels.
	Audit []AuditResponse `json:"audit,omitempty"`
}

// Criterion is one rubric item of a question.
type Criterion struct {
	ID string `json:"id"`
	// Kind is KindPositive, KindMajor or KindMinor.
	Kind string `json:"kind"`
	// Section is a positive requirement's section (SectionCore,
	// SectionEvidence, SectionConditional); empty for error criteria.
	Section string `json:"section,omitempty"`
	// Weight is a positive requirement's clinician-assigned points (≥ 0);
	// error criteria have none (their deduction is fixed by their kind).
	Weight float64 `json:"weight,omitempty"`
	// Text is the criterion as the judge reads it.
	Text string `json:"text"`
}

// Positive reports whether the criterion is a positive requirement.
func (c Criterion) Positive() bool { return c.Kind == KindPositive }

// AuditResponse is a response physicians labelled: their binary label
// per criterion (a label true means the criterion holds: a requirement
// is met, or an error is present).
type AuditResponse struct {
	// ID names the response; unique over the dataset.
	ID string `json:"id"`
	// Generator names the model that wrote it (informational).
	Generator string           `json:"generator,omitempty"`
	Response  string           `json:"response"`
	Labels    []PhysicianLabel `json:"labels"`
}

// PhysicianLabel is a physician's judgment of one criterion.
type PhysicianLabel struct {
	Criterion string `json:"criterion"`
	Met       bool   `json:"met"`
}

// Points is the available positive score B_i: the sum of the positive
// requirements' weights (10 for every item of the paper).
func (q *ConsultQuestion) Points() float64 {
	total := 0.0
	for _, c := range q.Criteria {
		if c.Positive() {
			total += c.Weight
		}
	}
	return total
}

// Criterion returns the question's criterion of an id.
func (q *ConsultQuestion) Criterion(id string) (Criterion, bool) {
	for _, c := range q.Criteria {
		if c.ID == id {
			return c, true
		}
	}
	return Criterion{}, false
}

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

// Deduction is the points an error criterion of a kind deducts when
// triggered: "triggered major and minor errors deduct two and one points"
// (§3.3); 0 for a positive requirement.
func Deduction(kind string) int {
	switch kind {
	case KindMajor:
		return 2
	case KindMinor:
		return 1
	}
	return 0
}

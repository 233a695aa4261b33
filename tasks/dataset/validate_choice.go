package dataset

import (
	"fmt"
	"slices"
	"strings"
)

// problemFunc records a problem at a place: the item and field it
// concerns ("guideline[3] (G004).answer").
type problemFunc func(where, format string, args ...any)

// validateText checks the text levels' sections: every item's id, options,
// reference answer, tags and grouping keys, and each trajectory's dated
// history and checkpoints.
func (r *Raw) validateText(add problemFunc) {
	ids := map[string]bool{}
	for i, q := range r.Guideline {
		where := fmt.Sprintf("guideline[%d] (%s)", i, q.ID)
		checkChoice(add, where, &q.Choice, ids, true)
		if !slices.Contains(Sources, q.Source) {
			add(where+".source", "%q is not one of %s", q.Source, strings.Join(Sources, ", "))
		}
	}
	clear(ids)
	for i, q := range r.Application {
		where := fmt.Sprintf("application[%d] (%s)", i, q.ID)
		checkChoice(add, where, &q.Choice, ids, true)
		checkOneOf(add, where+".group", q.Group, ApplicationGroups)
		checkText(add, where+".context", q.Context)
	}
	clear(ids)
	for i, q := range r.Planning {
		where := fmt.Sprintf("planning[%d] (%s)", i, q.ID)
		checkChoice(add, where, &q.Choice, ids, true)
		checkID(add, where+".patient", q.Patient)
		checkOneOf(add, where+".category", q.Category, PlanningCategories)
		checkText(add, where+".context", q.Context)
	}
	clear(ids)
	for i := range r.Longitudinal {
		t := &r.Longitudinal[i]
		where := fmt.Sprintf("longitudinal[%d] (%s)", i, t.Patient)
		checkID(add, where+".patient", t.Patient)
		if ids[t.Patient] {
			add(where+".patient", "duplicate trajectory %q; each patient has one", t.Patient)
		}
		ids[t.Patient] = true
		checkTrajectory(add, where, t)
	}
}

// checkTrajectory checks a trajectory's history (dated, in order, every
// line with its section, kind and text) and its checkpoints (at least
// one, single choice, on increasing days).
func checkTrajectory(add problemFunc, where string, t *Trajectory) {
	for j, rec := range t.Records {
		at := fmt.Sprintf("%s.records[%d]", where, j)
		if j > 0 && rec.Day < t.Records[j-1].Day {
			add(at+".day", "day %d comes before the previous record's day %d; list the history in clinical order", rec.Day, t.Records[j-1].Day)
		}
		checkText(add, at+".section", rec.Section)
		checkText(add, at+".kind", rec.Kind)
		checkText(add, at+".text", rec.Text)
	}
	if len(t.Checkpoints) == 0 {
		add(where+".checkpoints", "the trajectory has no checkpoint; give at least one scored decision point")
	}
	ids := map[string]bool{}
	for j := range t.Checkpoints {
		c := &t.Checkpoints[j]
		at := fmt.Sprintf("%s.checkpoints[%d] (%s)", where, j, c.ID)
		checkChoice(add, at, &c.Choice, ids, false)
		if c.Multiple {
			add(at+".multiple", "L5 checkpoints are single choice (prompt A4 asks for exactly one option letter)")
		}
		if j > 0 && c.Day <= t.Checkpoints[j-1].Day {
			add(at+".day", "day %d is not after the previous checkpoint's day %d; list checkpoints in clinical order", c.Day, t.Checkpoints[j-1].Day)
		}
		checkOneOf(add, at+".category", c.Category, CheckpointCategories)
		checkText(add, at+".current", c.Current)
	}
}

// checkChoice checks a closed-choice question: a unique id, the question
// (when needsQuestion), at least two options lettered with distinct
// capital letters, a reference answer among them (exactly one letter
// unless multiple-select), and its tags.
func checkChoice(add problemFunc, where string, c *Choice, ids map[string]bool, needsQuestion bool) {
	if checkID(add, where+".id", c.ID) {
		if ids[c.ID] {
			add(where+".id", "duplicate id %q; ids must be unique within the section", c.ID)
		}
		ids[c.ID] = true
	}
	if needsQuestion {
		checkText(add, where+".question", c.Question)
	}
	if reason := c.Check(); reason != "" {
		field, msg, _ := strings.Cut(reason, ": ")
		add(where+"."+field, "%s", msg)
	}
	seen := map[string]bool{}
	for _, tag := range c.Tags {
		switch {
		case strings.TrimSpace(tag) == "":
			add(where+".tags", "a tag is empty")
		case seen[tag]:
			add(where+".tags", "tag %q is given twice", tag)
		}
		seen[tag] = true
	}
}

// Check returns why the question cannot be asked and scored ("FIELD:
// reason"), or "" when it can: options lettered with distinct single
// capital letters and texts, at least two of them, and a reference answer
// among them — one letter for a single-choice item, distinct letters for a
// multiple-select one.
func (c *Choice) Check() string {
	if len(c.Options) < 2 {
		return fmt.Sprintf("options: %d option(s); a closed-choice question needs at least two", len(c.Options))
	}
	letters := map[string]bool{}
	for k, o := range c.Options {
		switch {
		case len(o.Letter) != 1 || o.Letter[0] < 'A' || o.Letter[0] > 'Z':
			return fmt.Sprintf("options: option %d's letter %q is not one capital letter A..Z", k, o.Letter)
		case letters[o.Letter]:
			return fmt.Sprintf("options: letter %s is given twice", o.Letter)
		case strings.TrimSpace(o.Text) == "":
			return fmt.Sprintf("options: option %s has no text", o.Letter)
		}
		letters[o.Letter] = true
	}
	switch {
	case len(c.Answer) == 0:
		return "answer: no reference answer; give the correct option letter(s)"
	case !c.Multiple && len(c.Answer) > 1:
		return fmt.Sprintf("answer: %d letters %s for a single-choice question; set multiple: true if the question asks for several", len(c.Answer), strings.Join(c.Answer, ", "))
	}
	given := map[string]bool{}
	for _, a := range c.Answer {
		switch {
		case !letters[a]:
			return fmt.Sprintf("answer: %q is not one of its options %s", a, strings.Join(c.Letters(), ", "))
		case given[a]:
			return fmt.Sprintf("answer: %s is given twice", a)
		}
		given[a] = true
	}
	return ""
}

// Letters are the option letters in option order.
func (c *Choice) Letters() []string {
	out := make([]string, len(c.Options))
	for i, o := range c.Options {
		out[i] = o.Letter
	}
	return out
}

// Gold is the reference answer as one label: its letters in option order,
// joined by ","; a single-choice item's is its letter.
func (c *Choice) Gold() string {
	var out []string
	for _, o := range c.Options {
		if slices.Contains(c.Answer, o.Letter) {
			out = append(out, o.Letter)
		}
	}
	return strings.Join(out, ",")
}

// checkID reports an empty id or one holding "/" (item ids join ids with
// "/"); it returns whether the id is usable.
func checkID(add problemFunc, where, id string) bool {
	switch {
	case strings.TrimSpace(id) == "":
		add(where, "empty id")
		return false
	case strings.ContainsAny(id, "/\n"):
		add(where, "id %q holds a \"/\" or a line break; item ids join ids with \"/\"", id)
		return false
	}
	return true
}

func checkText(add problemFunc, where, text string) {
	if strings.TrimSpace(text) == "" {
		add(where, "empty; the prompt needs it")
	}
}

func checkOneOf(add problemFunc, where, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		add(where, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

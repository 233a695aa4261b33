package policy

import (
	"regexp"
	"strconv"
)

// Citation is one inline policy citation of a report, "[policy: DOC L12--L18]".
type Citation struct {
	Raw      string `json:"raw"`
	Doc      string `json:"doc"`
	From     int    `json:"from"`
	To       int    `json:"to"`
	Resolves bool   `json:"resolves"`
	Why      string `json:"why,omitempty"`
}

// citationRE accepts the paper's "L_a--L_b" and the common variants "L12-L18", "L12–L18" (en dash), "L12-18" and
// a single "L12".
var citationRE = regexp.MustCompile(`\[policy:\s*([A-Za-z0-9._-]+?)\s+L(\d{1,6})(?:\s*(?:--|-|–|—)\s*L?(\d{1,6}))?\s*\]`)

// Citations finds every policy citation in a text and resolves each against the corpus by rule (§5.4): the
// document must exist and the span must lie within it, start ≤ end.
func (c *Corpus) Citations(text string) []Citation {
	var out []Citation
	for _, m := range citationRE.FindAllStringSubmatch(text, -1) {
		from, _ := strconv.Atoi(m[2])
		to := from
		if m[3] != "" {
			to, _ = strconv.Atoi(m[3])
		}
		out = append(out, c.resolve(Citation{Raw: m[0], Doc: m[1], From: from, To: to}))
	}
	return out
}

func (c *Corpus) resolve(ct Citation) Citation {
	d, ok := c.Get(ct.Doc)
	switch {
	case !ok:
		ct.Why = "no such document"
	case ct.From < 1 || ct.To < ct.From || ct.To > len(d.Lines):
		ct.Why = "span outside the document's lines 1.." + strconv.Itoa(len(d.Lines))
	default:
		ct.Resolves = true
	}
	return ct
}

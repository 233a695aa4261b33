package dataset

import "strings"

// Problem is one thing wrong with a dataset, naming the item and what to do.
type Problem struct {
	File   string
	Where  string
	Reason string
}

func (p Problem) Error() string {
	if p.Where == "" {
		return p.File + ": " + p.Reason
	}
	return p.File + ": " + p.Where + ": " + p.Reason
}

// Problems is every problem found; it is an error when not empty.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

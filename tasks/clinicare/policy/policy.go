// Package policy owns the CliniCARE policy corpus as agents and scorers see it: the governing and decoy documents
// of configs/clinicare/policies, each addressed by its id (the file name without ".md") and by 1-based line
// numbers, so a citation "[policy: aki-kdigo L12--L18]" resolves by rule (the paper's §5.4). It lists, searches
// and reads; it owns no scenario, case, record or tool transport, and reads no clock.
package policy

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	cfg "github.com/npcorch/npcorch/configs/clinicare"
)

// Document is one policy document, split into lines.
type Document struct {
	ID     string
	Title  string
	Status string
	Lines  []string
}

// Corpus is the set of documents, sorted by id; read-only once loaded.
type Corpus struct {
	docs []Document
	byID map[string]int
}

// Load reads the embedded corpus.
func Load() (*Corpus, error) { return FromFS(cfg.Files, "policies") }

// FromFS reads every *.md under dir of fsys.
func FromFS(fsys fs.FS, dir string) (*Corpus, error) {
	names, err := fs.Glob(fsys, dir+"/*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	c := &Corpus{byID: map[string]int{}}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		d := parse(strings.TrimSuffix(path.Base(name), ".md"), string(data))
		if d.Title == "" {
			return nil, fmt.Errorf("policy %s has no '# ' title line", name)
		}
		c.byID[d.ID] = len(c.docs)
		c.docs = append(c.docs, d)
	}
	return c, nil
}

func parse(id, text string) Document {
	d := Document{ID: id, Lines: strings.Split(strings.TrimRight(text, "\n"), "\n")}
	for _, l := range d.Lines {
		if t, ok := strings.CutPrefix(l, "# "); ok && d.Title == "" {
			d.Title = t
		}
		if s, ok := strings.CutPrefix(l, "Status: "); ok && d.Status == "" {
			d.Status = s
		}
	}
	return d
}

// Documents lists the documents in id order.
func (c *Corpus) Documents() []Document { return append([]Document(nil), c.docs...) }

// Get returns a document by id.
func (c *Corpus) Get(id string) (Document, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Document{}, false
	}
	return c.docs[i], true
}

// Line is one numbered line of a document.
type Line struct {
	Doc  string `json:"doc"`
	N    int    `json:"line"`
	Text string `json:"text"`
}

// Read returns lines from..to (1-based, inclusive) of a document; to is clipped to the document's end.
func (c *Corpus) Read(id string, from, to int) ([]Line, error) {
	d, ok := c.Get(id)
	if !ok {
		return nil, fmt.Errorf("no policy document %q; list the corpus to see the ids", id)
	}
	if from < 1 || to < from || from > len(d.Lines) {
		return nil, fmt.Errorf("policy %s has lines 1..%d; lines %d..%d are not a valid span", id, len(d.Lines), from, to)
	}
	to = min(to, len(d.Lines))
	out := make([]Line, 0, to-from+1)
	for n := from; n <= to; n++ {
		out = append(out, Line{Doc: id, N: n, Text: d.Lines[n-1]})
	}
	return out, nil
}

// Search returns the lines containing every word of the query (case-insensitive), in document and line order, at
// most limit of them, and whether more matched.
func (c *Corpus) Search(query string, limit int) ([]Line, bool) {
	words := strings.Fields(strings.ToLower(query))
	var out []Line
	for _, d := range c.docs {
		for i, l := range d.Lines {
			if matchAll(strings.ToLower(l), words) {
				if len(out) == limit {
					return out, true
				}
				out = append(out, Line{Doc: d.ID, N: i + 1, Text: l})
			}
		}
	}
	return out, false
}

func matchAll(line string, words []string) bool {
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if !strings.Contains(line, w) {
			return false
		}
	}
	return true
}

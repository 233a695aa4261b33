package report

import (
	"bytes"
	"fmt"
	"strings"
)

// A page is the report's content, independent of format: headings,
// paragraphs, tables and figures in reading order. The Markdown and HTML
// writers render the same page, so the two never disagree.
type page struct {
	Title  string
	Blocks []block
}

// block is one piece of content. Exactly one of its kinds is set: a
// heading (Level > 0), a paragraph (Text), tables shown side by side, or
// figures shown in a grid.
type block struct {
	Level   int
	ID      string
	Text    string
	Note    bool
	Tables  []*grid
	Figures []figure
}

// grid is a table. The first column heads its row when RowHead is set.
type grid struct {
	Caption string
	Head    []string
	Rows    []gridRow
	RowHead bool
}

// gridRow is one table row; Class styles it ("total", "base").
type gridRow struct {
	Class string
	Cells []gridCell
}

// gridCell is one cell: Text, then Sub (an interval) and Tail (marks).
// Markdown prints "Text Sub" then Tail on one line; HTML prints Text and
// Tail, with Sub on a second, smaller line. Class styles it: "num"
// right-aligns, "up"/"down" mark a compared value above/below the base
// run, "prov" a provisional score, "na" an absent value.
type gridCell struct {
	Text  string
	Sub   string
	Tail  string
	Class string
}

// plain is the cell on one line.
func (c gridCell) plain() string {
	if c.Sub == "" {
		return c.Text + c.Tail
	}
	return c.Text + " " + c.Sub + c.Tail
}

// figure is one PNG plot.
type figure struct {
	File    string // path under the output directory, e.g. plots/scores_path.png
	Caption string
	PNG     []byte
	Wide    bool // spans the whole page width
}

func (p *page) heading(level int, id, text string) {
	p.Blocks = append(p.Blocks, block{Level: level, ID: id, Text: text})
}

func (p *page) para(format string, args ...any) {
	p.Blocks = append(p.Blocks, block{Text: fmt.Sprintf(format, args...)})
}

func (p *page) note(text string) {
	p.Blocks = append(p.Blocks, block{Text: text, Note: true})
}

func (p *page) tables(gs ...*grid) {
	var keep []*grid
	for _, g := range gs {
		if g != nil {
			keep = append(keep, g)
		}
	}
	if len(keep) > 0 {
		p.Blocks = append(p.Blocks, block{Tables: keep})
	}
}

func (p *page) figures(fs ...figure) {
	if len(fs) > 0 {
		p.Blocks = append(p.Blocks, block{Figures: fs})
	}
}

func (g *grid) row(class string, cells ...gridCell) {
	g.Rows = append(g.Rows, gridRow{Class: class, Cells: cells})
}

func txt(s string) gridCell { return gridCell{Text: s} }
func num(s string) gridCell { return gridCell{Text: s, Class: "num"} }

// markdown renders the page as GitHub-flavoured Markdown. Figures link to
// their PNG files.
func (p *page) markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", mdEscape(p.Title))
	for _, bl := range p.Blocks {
		b.WriteByte('\n')
		switch {
		case bl.Level > 0:
			fmt.Fprintf(&b, "%s %s\n", strings.Repeat("#", bl.Level+1), mdEscape(bl.Text))
		case len(bl.Tables) > 0:
			for i, g := range bl.Tables {
				if i > 0 {
					b.WriteByte('\n')
				}
				g.markdown(&b)
			}
		case len(bl.Figures) > 0:
			for _, f := range bl.Figures {
				fmt.Fprintf(&b, "![%s](%s)\n", mdEscape(f.Caption), f.File)
			}
		case bl.Note:
			fmt.Fprintf(&b, "> %s\n", mdEscape(bl.Text))
		default:
			fmt.Fprintf(&b, "%s\n", mdEscape(bl.Text))
		}
	}
	return b.Bytes()
}

func (g *grid) markdown(b *bytes.Buffer) {
	if g.Caption != "" {
		fmt.Fprintf(b, "**%s**\n\n", mdEscape(g.Caption))
	}
	b.WriteString("|")
	for _, h := range g.Head {
		fmt.Fprintf(b, " %s |", mdCell(h))
	}
	b.WriteString("\n|")
	for i := range g.Head {
		if i == 0 && g.RowHead {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteByte('\n')
	for _, r := range g.Rows {
		b.WriteString("|")
		for _, c := range r.Cells {
			t := mdCell(c.plain())
			if (hasClass(c.Class, "up") || hasClass(c.Class, "down") || r.Class == "total") && t != "" {
				t = "**" + t + "**"
			}
			fmt.Fprintf(b, " %s |", t)
		}
		b.WriteByte('\n')
	}
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.NewReplacer("|", `\|`, "*", `\*`).Replace(mdEscape(s))
}

// mdEscape keeps text from being read as HTML by Markdown renderers.
func mdEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// hasClass reports whether a space-separated class list holds name.
func hasClass(list, name string) bool {
	for _, c := range strings.Fields(list) {
		if c == name {
			return true
		}
	}
	return false
}

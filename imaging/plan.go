package imaging

import (
	"fmt"
	"image"
	"math"
	"sort"
)

// Planes of a plane group.
const (
	PlaneAxial   = "axial"
	PlaneCoronal = "coronal"
)

// AxialGroupSequences are the rows of an axial group, top to bottom; the
// first is the reference the others are matched to.
var AxialGroupSequences = []string{SeqT1Ax, SeqT2Ax, SeqT1CAx}

// CoronalGroupSequences are the rows of a coronal group: T1+C fat
// suppressed over precontrast T1; the first is the reference.
var CoronalGroupSequences = []string{SeqT1CCorFS, SeqT1Cor}

// GroupRow is one tile of a plane group: a slice of a series and its
// position along the reference normal.
type GroupRow struct {
	Series   *Series
	Index    int
	Position float64
}

// GroupSpec is one plane group to render.
type GroupSpec struct {
	Plane string
	// Position is the reference slice's position along the reference
	// normal, mm.
	Position float64
	Rows     []GroupRow
}

// Rejection says why a reference slice made no group.
type Rejection struct {
	Plane    string
	Position float64
	Reason   string
}

// String says which group was dropped and why.
func (r Rejection) String() string {
	return fmt.Sprintf("%s group at %+.1f mm dropped: %s", r.Plane, r.Position, r.Reason)
}

// PlanGroups matches every slice of rows[0] (the reference) with the
// physically nearest slice of each other series and returns one group per
// reference slice that keep accepts (nil keeps all) and every partner
// matched. A reference slice a partner has no slice for, within half its
// thickness, is reported as a Rejection. Groups are ordered from superior
// to inferior for axial (patient +z first) and from anterior to posterior
// for coronal (patient −y first; DICOM's LPS axes).
func PlanGroups(plane string, rows []*Series, keep func(position float64) bool) ([]GroupSpec, []Rejection, error) {
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s groups: no series", plane)
	}
	ref := rows[0]
	n, err := ref.Meta.Normal()
	if err != nil {
		return nil, nil, err
	}
	matches := make([]Match, len(rows))
	for k := 1; k < len(rows); k++ {
		m, err := MatchSlices(ref.Meta, rows[k].Meta)
		if err != nil {
			return nil, nil, err
		}
		matches[k] = m
	}
	refPos := ref.Meta.Project(n)
	var groups []GroupSpec
	var rejected []Rejection
	for i, p := range refPos {
		if keep != nil && !keep(p) {
			continue
		}
		g := GroupSpec{Plane: plane, Position: p, Rows: []GroupRow{{Series: ref, Index: i, Position: p}}}
		ok := true
		for k := 1; k < len(rows); k++ {
			j := matches[k].Partner[i]
			if j < 0 {
				rejected = append(rejected, Rejection{Plane: plane, Position: p,
					Reason: fmt.Sprintf("%s has no slice within half its slice thickness", rows[k].Meta.Sequence)})
				ok = false
				break
			}
			g.Rows = append(g.Rows, GroupRow{Series: rows[k], Index: j, Position: dot(n, rows[k].Meta.Slices[j].Position)})
		}
		if ok {
			groups = append(groups, g)
		}
	}
	key := func(g GroupSpec) float64 {
		pos := ref.Meta.Slices[g.Rows[0].Index].Position
		if plane == PlaneCoronal {
			return pos[1]
		}
		return -pos[2]
	}
	sort.SliceStable(groups, func(a, b int) bool { return key(groups[a]) < key(groups[b]) })
	return groups, rejected, nil
}

// SampleGroups picks at most k plane groups for a small-context model.
// planes gives each group's plane in request order. The k places are
// split between axial and coronal in proportion to their counts (rounded
// half up for axial), each plane keeps both its endpoints when it gets two
// or more places, and picks inside a plane are evenly spaced:
// index_i = round(i(n−1)/(m−1)). It returns the kept indices, ascending.
func SampleGroups(planes []string, k int) []int {
	var ax, co []int
	for i, p := range planes {
		if p == PlaneCoronal {
			co = append(co, i)
		} else {
			ax = append(ax, i)
		}
	}
	total := len(ax) + len(co)
	if k >= total {
		out := make([]int, total)
		for i := range out {
			out[i] = i
		}
		return out
	}
	if k <= 0 {
		return nil
	}
	ka := int(math.Floor(float64(k)*float64(len(ax))/float64(total) + 0.5))
	minA, minC := min(len(ax), 2), min(len(co), 2)
	if k >= minA+minC {
		ka = clampInt(ka, minA, len(ax))
		if k-ka < minC {
			ka = k - minC
		}
		if k-ka > len(co) {
			ka = k - len(co)
		}
	} else {
		ka = min(k, minA)
	}
	kc := k - ka
	out := append(evenly(ax, ka), evenly(co, kc)...)
	sort.Ints(out)
	return out
}

// evenly picks m of idx evenly, both ends included.
func evenly(idx []int, m int) []int {
	n := len(idx)
	switch {
	case m <= 0 || n == 0:
		return nil
	case m >= n:
		return append([]int(nil), idx...)
	case m == 1:
		return []int{idx[0]}
	}
	out := make([]int, m)
	for i := range out {
		out[i] = idx[(2*i*(n-1)+(m-1))/(2*(m-1))]
	}
	return out
}

// PanelCells picks the Grid² slices of a sequence panel: slice
// floor((i+½)·n/Grid²) for i = 0..Grid²−1, the centres of equal bins, so
// the panel spans the series without its outermost slices.
func PanelCells(p Params, s *Series) []Cell {
	k := p.PanelGrid * p.PanelGrid
	n := len(s.Meta.Slices)
	cells := make([]Cell, k)
	for i := range cells {
		cells[i] = Cell{Series: s, Index: int(math.Floor((float64(i) + 0.5) * float64(n) / float64(k)))}
	}
	return cells
}

// SliceBox is a rectangle on one slice of a series, in that slice's pixel
// coordinates (Max exclusive), the slice named by its instance number. Rect
// is taken as given: an inverted rectangle is empty, not flipped.
type SliceBox struct {
	Sequence string
	Instance int
	Rect     image.Rectangle
}

// area is the box's pixel area, zero when it is empty or inverted.
func (b SliceBox) area() int {
	if b.Rect.Empty() {
		return 0
	}
	return b.Rect.Dx() * b.Rect.Dy()
}

// CardCells lays out a structure card from a finding's boxes: one row per
// p.CardRows sequence; in each row the three consecutive slices around the
// slice where the finding's box on that sequence is largest (ties: the
// first along the normal), clamped inside the series. Each cell outlines
// the finding's box on that slice, or the row's largest box when that
// slice has none. name says which finding it is in errors; series maps
// sequence names to series.
func CardCells(p Params, name string, boxes []SliceBox, series map[string]*Series) ([]Cell, error) {
	var cells []Cell
	for _, seq := range p.CardRows {
		s := series[seq]
		if s == nil {
			return nil, fmt.Errorf("card %s: the patient has no %s series", name, seq)
		}
		idxOf := make(map[int]int, len(s.Meta.Slices))
		for i, sl := range s.Meta.Slices {
			idxOf[sl.Instance] = i
		}
		onSlice := map[int]image.Rectangle{}
		best, bestArea := -1, 0
		for _, b := range boxes {
			if b.Sequence != seq {
				continue
			}
			i, ok := idxOf[b.Instance]
			if !ok {
				return nil, fmt.Errorf("card %s: box on %s instance %d, which the series does not have", name, seq, b.Instance)
			}
			a := b.area()
			if a == 0 {
				return nil, fmt.Errorf("card %s: empty box on %s instance %d", name, seq, b.Instance)
			}
			onSlice[i] = b.Rect
			if a > bestArea || (a == bestArea && i < best) {
				best, bestArea = i, a
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("card %s: no box on %s; every card row needs one", name, seq)
		}
		n := len(s.Meta.Slices)
		start := clampInt(best-1, 0, max(n-3, 0))
		for j := 0; j < 3; j++ {
			i := min(start+j, n-1)
			r, ok := onSlice[i]
			if !ok {
				r = onSlice[best]
			}
			cells = append(cells, Cell{Series: s, Index: i, Boxes: []image.Rectangle{r}})
		}
	}
	return cells, nil
}

// PageCells lays out CarePath MRI page number page (0-based): one row per
// p.PageRows sequence, p.PageColumns columns; over all pages each sequence
// shows Pages×PageColumns positions evenly spaced from its first to its
// last slice (index round(j(n−1)/(N−1))), page by page, left to right.
func PageCells(p Params, page int, series map[string]*Series) ([]Cell, error) {
	total := p.Pages * p.PageColumns
	var cells []Cell
	for _, seq := range p.PageRows {
		s := series[seq]
		if s == nil {
			return nil, fmt.Errorf("carepath page %d: the patient has no %s series", page+1, seq)
		}
		n := len(s.Meta.Slices)
		for c := 0; c < p.PageColumns; c++ {
			j := page*p.PageColumns + c
			i := 0
			if total > 1 {
				i = (2*j*(n-1) + (total - 1)) / (2 * (total - 1))
			}
			cells = append(cells, Cell{Series: s, Index: i})
		}
	}
	return cells, nil
}

package synth

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
)

// TestLayoutIsDisjoint checks that the boxes around every structure (both
// sides) and the primary tumour (either side) stay apart even after the
// per-patient jitter, so that a tumour painted inside one structure never
// reaches another.
func TestLayoutIsDisjoint(t *testing.T) {
	const jitter = 0.8
	type part struct {
		name   string
		lo, hi [3]float64
	}
	var parts []part
	add := func(name string, p place) {
		var q part
		q.name = name
		for i := range 3 {
			q.lo[i], q.hi[i] = p.c[i]-p.r[i]-jitter, p.c[i]+p.r[i]+jitter
		}
		parts = append(parts, q)
	}
	st := configs.DefaultStructures()
	for _, s := range st.List {
		left, err := placeOf(s, false)
		if err != nil {
			t.Fatal(err)
		}
		add(s.ID, left)
		if s.Bilateral {
			right, _ := placeOf(s, true)
			add(s.ID+"/right", right)
			if right.c[0]-right.r[0] >= left.c[0]-left.r[0] {
				t.Errorf("%s: the right instance is not on the right", s.ID)
			}
		}
	}
	add("primary/left", primaryTumour)
	right := primaryTumour
	right.c[0] = -right.c[0]
	add("primary/right", right)
	for i, a := range parts {
		for _, b := range parts[i+1:] {
			if strings.HasPrefix(a.name, "primary") && strings.HasPrefix(b.name, "primary") {
				continue // only one side has a primary
			}
			overlap := true
			for k := range 3 {
				if a.hi[k] <= b.lo[k] || b.hi[k] <= a.lo[k] {
					overlap = false
				}
			}
			if overlap {
				t.Errorf("%s and %s overlap", a.name, b.name)
			}
		}
	}
	if len(layoutIDs()) != len(st.List) {
		t.Errorf("layout has %d structures, structures.yaml %d", len(layoutIDs()), len(st.List))
	}
	for _, id := range layoutIDs() {
		if _, ok := st.Get(id); !ok {
			t.Errorf("layout structure %s is not in structures.yaml", id)
		}
	}
}

// TestTumourExtentMatchesLabels paints every axial and coronal card slice
// of several patients and checks that tumour pixels lie only in the boxes
// of invaded findings or of the primary, and that the centre of every
// finding's largest box is tumour when it is invaded and the structure's
// own tissue when it is not.
func TestTumourExtentMatchesLabels(t *testing.T) {
	opt, err := DefaultOptions("unused").withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	opt.Patients, opt.CarePath = 4, 1
	patients, err := planDataset(opt, opt.Structures)
	if err != nil {
		t.Fatal(err)
	}
	size := opt.ImageSize
	delta := fieldOfView / float64(size)
	labels := make([]tissue, size*size)
	for _, p := range patients {
		for _, seq := range []string{imaging.SeqT1CAx, imaging.SeqT1CCorFS} {
			s, _ := p.seriesOf(seq)
			for _, sl := range s.slices {
				paint(labels, p.solids, s.axes, sl.pos, delta, size)
				var allowed []boxRect
				if b, ok := boxOn(p.primary, s.axes, sl.pos, delta, size); ok {
					allowed = append(allowed, boxRect{b.X0, b.Y0, b.X1, b.Y1})
				}
				for _, f := range p.findings {
					for _, b := range f.boxes {
						if f.invaded && b.Sequence == seq && b.Instance == sl.instance {
							allowed = append(allowed, boxRect{b.X0, b.Y0, b.X1, b.Y1})
						}
					}
				}
				for i, tis := range labels {
					if tis == tumour && !inAny(allowed, i%size, i/size) {
						t.Fatalf("%s %s instance %d: tumour at (%d,%d) outside every invaded box", p.id, seq, sl.instance, i%size, i/size)
					}
				}
				for _, f := range p.findings {
					best := -1
					for i, b := range f.boxes {
						if b.Sequence == seq && (best < 0 || b.Area() > f.boxes[best].Area()) {
							best = i
						}
					}
					b := f.boxes[best]
					if b.Instance != sl.instance {
						continue
					}
					// The centre shows tumour when invaded, else the
					// structure's own innermost tissue.
					want := tumour
					if !f.invaded {
						pl, _ := layout(f.structure)
						drawn := pl.draw([3]float64{})
						want = drawn[len(drawn)-1].t
					}
					cx, cy := (b.X0+b.X1-1)/2, (b.Y0+b.Y1-1)/2
					if got := labels[cy*size+cx]; got != want {
						t.Errorf("%s %s %s on %s: tissue %d at the box centre, want %d (invaded %v)", p.id, f.structure, f.side, seq, got, want, f.invaded)
					}
				}
			}
		}
	}
}

type boxRect struct{ x0, y0, x1, y1 int }

func inAny(rs []boxRect, x, y int) bool {
	for _, r := range rs {
		if x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1 {
			return true
		}
	}
	return false
}

func TestStructureListErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`structures:
  - {id: nasal_passage, t_level: 1, bilateral: false}
  - {id: hypopharynx, t_level: 4, bilateral: false}
`, `structure "hypopharynx"`},
		{`structures:
  - {id: nasal_passage, t_level: 1, bilateral: false}
  - {id: clivus, t_level: 3, bilateral: false}
`, "t_level 2"},
	} {
		st, err := configs.LoadStructures(fstest.MapFS{"s.yaml": {Data: []byte(tc.yaml)}}, "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		opt := smallOptions(filepath.Join(t.TempDir(), "d"), 1)
		opt.Structures = st
		if _, err := Generate(context.Background(), opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate with %q: %v, want an error about %q", tc.yaml, err, tc.want)
		}
	}
}

func TestAxesOf(t *testing.T) {
	for _, tc := range []struct {
		plane string
		want  axes
	}{
		{axial, axes{row: 0, col: 1, normal: 2, rowSign: 1, colSign: 1}},
		{coronal, axes{row: 0, col: 2, normal: 1, rowSign: 1, colSign: -1}},
		{sagittal, axes{row: 1, col: 2, normal: 0, rowSign: 1, colSign: -1}},
	} {
		if got := axesOf(orientation(tc.plane)); got != tc.want {
			t.Errorf("axesOf(%s) = %+v, want %+v", tc.plane, got, tc.want)
		}
	}
}

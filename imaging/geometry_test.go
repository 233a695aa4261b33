package imaging

import (
	"errors"
	"math"
	"testing"
)

func axialMeta(seq string, zs []float64, thick float64) SeriesMeta {
	m := SeriesMeta{Sequence: seq, FrameOfReference: "F1", Orientation: [6]float64{1, 0, 0, 0, 1, 0},
		PixelSpacing: [2]float64{1, 1}, SliceThickness: thick}
	for i, z := range zs {
		m.Slices = append(m.Slices, SliceMeta{File: "s.png", Instance: i + 1, Position: [3]float64{-10, -10, z}})
	}
	return m
}

func TestSortSlicesShuffledAndTies(t *testing.T) {
	m := axialMeta(SeqT1Ax, []float64{9, 0, 6, 3, 3}, 3)
	// Instances: z=9→1, 0→2, 6→3, 3→4, 3→5.
	m.Slices[3].Instance, m.Slices[4].Instance = 7, 5
	if err := SortSlices(&m); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, s := range m.Slices {
		got = append(got, s.Instance)
	}
	want := []int{2, 5, 7, 3, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v (by position along the normal, ties by instance)", got, want)
		}
	}
}

func TestSortSlicesFlippedNormal(t *testing.T) {
	m := axialMeta(SeqT1Ax, []float64{0, 3, 6}, 3)
	m.Orientation = [6]float64{0, 1, 0, 1, 0, 0} // normal −z
	if err := SortSlices(&m); err != nil {
		t.Fatal(err)
	}
	if m.Slices[0].Position[2] != 6 {
		t.Fatalf("first slice at z=%v; along normal −z the highest z comes first", m.Slices[0].Position[2])
	}
}

func TestMatchSlicesNearestWithinHalfThickness(t *testing.T) {
	ref := axialMeta(SeqT1Ax, []float64{0, 3, 6, 9, 12}, 3)
	// Partner shuffled, shifted by 0.6 mm, slice at 6 missing, one extra
	// far away.
	other := axialMeta(SeqT2Ax, []float64{12.6, 0.6, 9.6, 3.6, 40}, 3)
	m, err := MatchSlices(ref, other)
	if err != nil {
		t.Fatal(err)
	}
	// ref z=0→0.6 (idx1), 3→3.6 (idx3), 6→ nearest 3.6/9.6 at 2.4/3.6 > 1.5: -1, 9→9.6 (idx2), 12→12.6 (idx0)
	want := []int{1, 3, -1, 2, 0}
	for i := range want {
		if m.Partner[i] != want[i] {
			t.Fatalf("partners %v, want %v", m.Partner, want)
		}
	}
	if math.Abs(m.Distance[0]-0.6) > 1e-9 || !math.IsNaN(m.Distance[2]) {
		t.Errorf("distances %v", m.Distance)
	}
}

func TestMatchSlicesOblique(t *testing.T) {
	// Both series tilted 20° about x: row (1,0,0), col (0,cos,sin).
	a := 20 * math.Pi / 180
	o := [6]float64{1, 0, 0, 0, math.Cos(a), math.Sin(a)}
	n := cross([3]float64{1, 0, 0}, [3]float64{0, math.Cos(a), math.Sin(a)})
	mk := func(seq string, ds []float64) SeriesMeta {
		m := SeriesMeta{Sequence: seq, FrameOfReference: "F", Orientation: o, PixelSpacing: [2]float64{1, 1}, SliceThickness: 4}
		for i, d := range ds {
			// In-plane offsets differ between the series; only the
			// component along the normal matters.
			p := [3]float64{5 * float64(i), d*n[1] + 7*math.Cos(a), d*n[2] + 7*math.Sin(a)}
			m.Slices = append(m.Slices, SliceMeta{File: "x", Instance: i + 1, Position: p})
		}
		return m
	}
	ref := mk(SeqT1Ax, []float64{0, 4, 8})
	other := mk(SeqT1CAx, []float64{8.5, 0.5, 4.5})
	m, err := MatchSlices(ref, other)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 2, 0}
	for i := range want {
		if m.Partner[i] != want[i] || math.Abs(m.Distance[i]-0.5) > 1e-9 {
			t.Fatalf("partners %v distances %v, want %v at 0.5 mm", m.Partner, m.Distance, want)
		}
	}
}

func TestMatchSlicesRefusesUnmatchable(t *testing.T) {
	ref := axialMeta(SeqT1Ax, []float64{0, 3}, 3)
	other := axialMeta(SeqT2Ax, []float64{0, 3}, 3)
	other.FrameOfReference = "F2"
	if _, err := MatchSlices(ref, other); !errors.Is(err, ErrNotMatchable) {
		t.Errorf("different frames of reference: %v", err)
	}
	other = axialMeta(SeqT1Cor, []float64{0, 3}, 3)
	other.Orientation = [6]float64{1, 0, 0, 0, 0, -1}
	if _, err := MatchSlices(ref, other); !errors.Is(err, ErrNotMatchable) {
		t.Errorf("non-parallel planes: %v", err)
	}
	bad := ref
	bad.Orientation = [6]float64{1, 0, 0, 2, 0, 0}
	if _, err := MatchSlices(bad, ref); err == nil {
		t.Error("parallel row and column vectors must be refused")
	}
}

func TestSampleGroups(t *testing.T) {
	planes := make([]string, 0, 79)
	for i := 0; i < 55; i++ {
		planes = append(planes, PlaneAxial)
	}
	for i := 0; i < 24; i++ {
		planes = append(planes, PlaneCoronal)
	}
	for _, k := range []int{50, 34, 10, 4} {
		got := SampleGroups(planes, k)
		if len(got) != k {
			t.Fatalf("k=%d: %d groups", k, len(got))
		}
		var ax, co []int
		for i, g := range got {
			if i > 0 && g <= got[i-1] {
				t.Fatalf("k=%d: not ascending and distinct: %v", k, got)
			}
			if planes[g] == PlaneAxial {
				ax = append(ax, g)
			} else {
				co = append(co, g)
			}
		}
		if ax[0] != 0 || ax[len(ax)-1] != 54 || co[0] != 55 || co[len(co)-1] != 78 {
			t.Errorf("k=%d: endpoints not kept: axial %v coronal %v", k, ax, co)
		}
		// Proportional, but each plane keeps its two endpoints.
		if wantA := min(max(int(math.Floor(float64(k)*55/79+0.5)), 2), k-2); len(ax) != wantA {
			t.Errorf("k=%d: %d axial, want %d (proportional)", k, len(ax), wantA)
		}
	}
	if got := SampleGroups(planes[:5], 10); len(got) != 5 {
		t.Errorf("k above the count must keep all: %v", got)
	}
}

package imaging

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ParallelTolerance is how far from 1 the |cosine| between two slice normals
// may be for the series to count as parallel (about 0.8°).
const ParallelTolerance = 1e-4

// Normal returns the unit slice normal row × col of the series orientation.
// It fails when the orientation is not two non-parallel vectors.
func (m SeriesMeta) Normal() ([3]float64, error) {
	r := [3]float64{m.Orientation[0], m.Orientation[1], m.Orientation[2]}
	c := [3]float64{m.Orientation[3], m.Orientation[4], m.Orientation[5]}
	n := cross(r, c)
	l := math.Sqrt(dot(n, n))
	if !(l > 1e-6) || math.IsInf(l, 0) {
		return [3]float64{}, fmt.Errorf("series %s: orientation %v has no slice normal (row and column vectors are zero or parallel); fix the orientation in its series.json or DICOM headers", m.Sequence, m.Orientation)
	}
	return [3]float64{n[0] / l, n[1] / l, n[2] / l}, nil
}

// Project returns each slice's position along the unit normal n:
// dot(n, ImagePositionPatient), in the order of m.Slices.
func (m SeriesMeta) Project(n [3]float64) []float64 {
	out := make([]float64, len(m.Slices))
	for i, s := range m.Slices {
		out[i] = dot(n, s.Position)
	}
	return out
}

// SortSlices orders the slices of m in place along its own slice normal
// (ascending dot(normal, position)), ties broken by Instance, as ITK does.
// It fails when the orientation has no normal.
func SortSlices(m *SeriesMeta) error {
	n, err := m.Normal()
	if err != nil {
		return err
	}
	pos := m.Project(n)
	idx := make([]int, len(m.Slices))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		pa, pb := pos[idx[a]], pos[idx[b]]
		if pa != pb {
			return pa < pb
		}
		return m.Slices[idx[a]].Instance < m.Slices[idx[b]].Instance
	})
	sorted := make([]SliceMeta, len(idx))
	for i, j := range idx {
		sorted[i] = m.Slices[j]
	}
	m.Slices = sorted
	return nil
}

// ErrNotMatchable is wrapped by MatchSlices when two series cannot be
// matched at all (different frame of reference or non-parallel planes).
var ErrNotMatchable = errors.New("series cannot be matched")

// Match pairs the slices of a reference series with the physically nearest
// slice of a partner series.
type Match struct {
	// Partner[i] is the index in the partner's Slices nearest to reference
	// slice i, or -1 when the nearest is farther than half the partner's
	// slice thickness.
	Partner []int
	// Distance[i] is |reference − partner| along the reference normal, mm
	// (NaN where Partner[i] is -1).
	Distance []float64
}

// MatchSlices matches every slice of ref with the nearest slice of other:
// both series must share a frame of reference and have parallel normals;
// both are projected on ref's normal; a partner farther than half of
// other's slice thickness (ref's when other has none) is rejected.
func MatchSlices(ref, other SeriesMeta) (Match, error) {
	if ref.FrameOfReference == "" || ref.FrameOfReference != other.FrameOfReference {
		return Match{}, fmt.Errorf("match %s with %s: frames of reference differ (%q vs %q); the series were not acquired in one session: %w",
			ref.Sequence, other.Sequence, ref.FrameOfReference, other.FrameOfReference, ErrNotMatchable)
	}
	nr, err := ref.Normal()
	if err != nil {
		return Match{}, err
	}
	no, err := other.Normal()
	if err != nil {
		return Match{}, err
	}
	if c := math.Abs(dot(nr, no)); c < 1-ParallelTolerance {
		return Match{}, fmt.Errorf("match %s with %s: slice planes are not parallel (angle %.2f°): %w",
			ref.Sequence, other.Sequence, math.Acos(math.Min(c, 1))*180/math.Pi, ErrNotMatchable)
	}
	half := other.SliceThickness / 2
	if !(half > 0) {
		half = ref.SliceThickness / 2
	}
	if !(half > 0) {
		return Match{}, fmt.Errorf("match %s with %s: neither series gives a slice thickness; add slice_thickness to series.json", ref.Sequence, other.Sequence)
	}
	rp := ref.Project(nr)
	op := other.Project(nr)
	// Sort the partner projections once; nearest by binary search.
	order := make([]int, len(op))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		if op[order[a]] != op[order[b]] {
			return op[order[a]] < op[order[b]]
		}
		return other.Slices[order[a]].Instance < other.Slices[order[b]].Instance
	})
	m := Match{Partner: make([]int, len(rp)), Distance: make([]float64, len(rp))}
	for i, p := range rp {
		k := sort.Search(len(order), func(j int) bool { return op[order[j]] >= p })
		best, bestD := -1, math.Inf(1)
		for _, j := range []int{k - 1, k} {
			if j < 0 || j >= len(order) {
				continue
			}
			d := math.Abs(op[order[j]] - p)
			if d < bestD {
				best, bestD = order[j], d
			}
		}
		if best < 0 || bestD > half {
			m.Partner[i], m.Distance[i] = -1, math.NaN()
			continue
		}
		m.Partner[i], m.Distance[i] = best, bestD
	}
	return m, nil
}

func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

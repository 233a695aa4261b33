package imaging

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// filterRowRef is the byte-by-byte definition of the five PNG filters and
// image/png's choice among them; filterRow must give the same bytes.
func filterRowRef(cand *[5][]byte, cur, prev []byte, bpp int) int {
	n := len(cur)
	for f := range cand {
		cand[f][0] = byte(f)
	}
	for i := 0; i < n; i++ {
		var a, c int
		if i >= bpp {
			a, c = int(cur[i-bpp]), int(prev[i-bpp])
		}
		b := int(prev[i])
		cand[0][i+1] = cur[i]
		cand[1][i+1] = cur[i] - byte(a)
		cand[2][i+1] = cur[i] - byte(b)
		cand[3][i+1] = cur[i] - byte((a+b)/2)
		p := a + b - c
		pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
		switch {
		case pa <= pb && pa <= pc:
			cand[4][i+1] = cur[i] - byte(a)
		case pb <= pc:
			cand[4][i+1] = cur[i] - byte(b)
		default:
			cand[4][i+1] = cur[i] - byte(c)
		}
	}
	best, bestSum := 0, -1
	for f := range cand {
		s := 0
		for _, v := range cand[f][1 : n+1] {
			s += abs(int(int8(v)))
		}
		if bestSum < 0 || s < bestSum {
			best, bestSum = f, s
		}
	}
	return best
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestFilterRowMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	chosen := map[int]int{}
	for trial := 0; trial < 4000; trial++ {
		bpp := 1 + r.IntN(4)
		n := bpp * (1 + r.IntN(300))
		cur, prev := make([]byte, n), make([]byte, n)
		// Mixes of smooth ramps, flat runs and noise, so every filter wins
		// some rows and sums reach the 16-bit lane limits.
		mode := r.IntN(4)
		for i := range cur {
			switch mode {
			case 0:
				cur[i], prev[i] = byte(r.IntN(256)), byte(r.IntN(256))
			case 1:
				cur[i], prev[i] = byte(i/bpp), byte(i/bpp+1)
			case 2:
				cur[i], prev[i] = byte(r.IntN(4)), byte(r.IntN(4))
			default:
				cur[i], prev[i] = byte(128+r.IntN(3)), byte(i*7)
			}
		}
		var got, want [5][]byte
		for f := range got {
			got[f], want[f] = make([]byte, n+1), make([]byte, n+1)
		}
		gf, wf := filterRow(&got, cur, prev, bpp), filterRowRef(&want, cur, prev, bpp)
		if gf != wf {
			t.Fatalf("trial %d (bpp %d, %d bytes): chose filter %d, want %d", trial, bpp, n, gf, wf)
		}
		if !bytes.Equal(got[gf], want[wf]) {
			t.Fatalf("trial %d (bpp %d, %d bytes): filter %d differs", trial, bpp, n, gf)
		}
		chosen[gf]++
	}
	if len(chosen) < 4 {
		t.Errorf("only filters %v were chosen; the test rows do not exercise the choice", chosen)
	}
}

// TestPaethWordMatchesPredictor: the eight-lane predictor equals the
// byte one in every lane, on random words and on every lane at the
// extremes.
func TestPaethWordMatchesPredictor(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	edge := []uint64{0, 1, 127, 128, 129, 254, 255}
	for trial := 0; trial < 300000; trial++ {
		var a, b, c uint64
		if trial < 1000 {
			for l := 0; l < 8; l++ {
				a |= edge[r.IntN(len(edge))] << (8 * l)
				b |= edge[r.IntN(len(edge))] << (8 * l)
				c |= edge[r.IntN(len(edge))] << (8 * l)
			}
		} else {
			a, b, c = r.Uint64(), r.Uint64(), r.Uint64()
		}
		got := paethWord(a, b, c)
		for l := 0; l < 8; l++ {
			sh := uint(8 * l)
			want := paethPredict(int(a>>sh&0xff), int(b>>sh&0xff), int(c>>sh&0xff))
			if int(got>>sh&0xff) != want {
				t.Fatalf("lane %d of a %#x b %#x c %#x: %d, want %d", l, a, b, c, got>>sh&0xff, want)
			}
		}
	}
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b++ {
			for c := 0; c < 256; c++ {
				if g := paethWord(uint64(a), uint64(b), uint64(c)); int(g&0xff) != paethPredict(a, b, c) {
					t.Fatalf("a %d b %d c %d: %d, want %d", a, b, c, g&0xff, paethPredict(a, b, c))
				}
			}
		}
	}
}

// sumAbs sums the bytes of p read as signed values, in absolute value,
// with absSum as filterRow does.
func sumAbs(p []byte) int {
	var s absSum
	for ; len(p) >= 8; p = p[8:] {
		s.word(binary.LittleEndian.Uint64(p))
	}
	for _, b := range p {
		s.byte(b)
	}
	return s.total()
}

func TestSumAbsLongRows(t *testing.T) {
	for _, n := range []int{0, 7, 8, 2039, 2040, 2041, 4096, 100003} {
		p := bytes.Repeat([]byte{0x80}, n) // -128 everywhere: the largest lane sums
		if got := sumAbs(p); got != 128*n {
			t.Errorf("sumAbs of %d bytes of -128 = %d, want %d", n, got, 128*n)
		}
	}
}

func BenchmarkFilterRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, bpp := range []int{1, 3} {
		n := 1536 * bpp
		cur, prev := make([]byte, n), make([]byte, n)
		for i := range cur {
			cur[i], prev[i] = byte(r.IntN(256)), byte(r.IntN(256))
		}
		var cand [5][]byte
		for f := range cand {
			cand[f] = make([]byte, n+1)
		}
		b.Run(map[int]string{1: "gray", 3: "rgb"}[bpp], func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				filterRow(&cand, cur, prev, bpp)
			}
		})
	}
}

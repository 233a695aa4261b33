package score

import (
	"encoding/json"
	"math"
	"testing"
)

func TestClopperPearsonPaper(t *testing.T) {
	// Claude-4.6 Strict: 23/100, exact 95 % CI 15.2–32.5 % (paper §4.3).
	iv, err := ClopperPearson(23, 100, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if round1(iv.Lower) != "15.2" || round1(iv.Upper) != "32.5" {
		t.Errorf("23/100: [%.3f, %.3f], want 15.2–32.5", iv.Lower, iv.Upper)
	}
	if iv.Method != MethodClopperPearson || iv.Level != 0.95 {
		t.Errorf("interval %+v: wrong method or level", iv)
	}
}

func TestClopperPearsonEdges(t *testing.T) {
	// x = 0: lower 0, upper 1 − (α/2)^(1/n); x = n mirrors it.
	iv, _ := ClopperPearson(0, 10, 0.95)
	wantUpper := 100 * (1 - math.Pow(0.025, 1.0/10))
	if iv.Lower != 0 || round1(iv.Upper) != round1(wantUpper) || round1(wantUpper) != "30.8" {
		t.Errorf("0/10 = [%v, %v], want [0, %.3f]", iv.Lower, iv.Upper, wantUpper)
	}
	iv, _ = ClopperPearson(10, 10, 0.95)
	if iv.Upper != 100 || round1(iv.Lower) != round1(100-wantUpper) {
		t.Errorf("10/10 = [%v, %v], want [%.3f, 100]", iv.Lower, iv.Upper, 100-wantUpper)
	}
	for _, c := range [][2]int{{1, 0}, {-1, 5}, {6, 5}} {
		if _, err := ClopperPearson(c[0], c[1], 0.95); err == nil {
			t.Errorf("ClopperPearson(%d, %d) gave no error", c[0], c[1])
		}
	}
	if _, err := ClopperPearson(1, 2, 1.5); err == nil {
		t.Error("level 1.5 gave no error")
	}
}

func TestPercentileType7(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5}
	for q, want := range map[float64]float64{0: 1, 0.25: 2, 0.5: 3, 0.1: 1.4, 1: 5, 0.975: 4.9} {
		if got := percentile(v, q); !near(got, want) {
			t.Errorf("percentile(%v) = %v, want %v", q, got, want)
		}
	}
}

func TestResamplerDrawsWholePatients(t *testing.T) {
	rs := newResampler(7, Options{Seed: 1, Draws: 50, Level: 0.95})
	if len(rs.weights) != 50 {
		t.Fatalf("%d draws, want 50", len(rs.weights))
	}
	distinct := map[string]bool{}
	for _, w := range rs.weights {
		total := uint32(0)
		for _, k := range w {
			total += k
		}
		if total != 7 {
			t.Fatalf("draw %v resamples %d patients, want 7", w, total)
		}
		b, _ := json.Marshal(w)
		distinct[string(b)] = true
	}
	if len(distinct) < 40 {
		t.Errorf("only %d distinct draws of 50: the generator is not resampling", len(distinct))
	}
	if off := newResampler(7, Options{Draws: -1}); off.weights != nil {
		t.Error("Draws < 0 should turn the bootstrap off")
	}
}

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{}.resolved()
	if err != nil || o.Draws != DefaultDraws || o.Level != DefaultLevel {
		t.Errorf("zero Options resolved to %+v, %v", o, err)
	}
	if _, err := (Options{Level: 95}).resolved(); err == nil {
		t.Error("level 95 (a percentage) should be rejected")
	}
}

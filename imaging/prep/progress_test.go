package prep

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestProgressFollowsAGrowingPlan: the plan grows patient by patient while
// the first images are made; the plain lines keep coming as it grows and
// the last one is the whole. Before, a line at 70/77 (nine tenths of what
// was planned so far) silenced every line until 721/721 at the end.
func TestProgressFollowsAGrowingPlan(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out)
	p.add(77)
	for range 70 {
		p.step(false, false)
	}
	for range 64 {
		p.add(10)
		for range 10 {
			p.step(false, false)
		}
	}
	for range 7 {
		p.step(false, false)
	}
	p.done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != "prep: 717/717 images (0 cached, 0 failed)" {
		t.Errorf("last line %q, want the whole plan done", last)
	}
	growing := 0 // lines written while the plan grew past its first patient
	for _, l := range lines {
		var done, planned int
		if _, err := fmt.Sscanf(l, "prep: %d/%d images", &done, &planned); err == nil && planned > 77 && done < 717 {
			growing++
		}
	}
	if growing < 5 {
		t.Errorf("%d lines while the plan grew from 77 to 717 images, want one about every tenth:\n%s", growing, out.String())
	}
}

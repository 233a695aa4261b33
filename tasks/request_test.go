package tasks

import (
	"reflect"
	"testing"
)

func TestSubsampleGroups(t *testing.T) {
	planes := func(ax, co int) []string {
		var p []string
		for i := 0; i < ax; i++ {
			p = append(p, "axial")
		}
		for i := 0; i < co; i++ {
			p = append(p, "coronal")
		}
		return p
	}
	cases := []struct {
		ax, co, k int
		want      []int
	}{
		{4, 2, 10, []int{0, 1, 2, 3, 4, 5}},
		{6, 3, 6, []int{0, 2, 3, 5, 6, 8}},
		{10, 0, 4, []int{0, 3, 6, 9}},
		{60, 19, 35, nil}, // checked by properties below
	}
	for _, c := range cases {
		got := SubsampleGroups(planes(c.ax, c.co), c.k)
		if c.want != nil && !reflect.DeepEqual(got, c.want) {
			t.Errorf("SubsampleGroups(%d axial, %d coronal, %d) = %v, want %v", c.ax, c.co, c.k, got, c.want)
		}
		wantLen := min(c.k, c.ax+c.co)
		if len(got) != wantLen {
			t.Errorf("%d axial, %d coronal, k=%d: got %d picks", c.ax, c.co, c.k, len(got))
		}
		// Endpoints of each plane are kept, order is preserved, no repeats.
		seen := map[int]bool{}
		for i, v := range got {
			if seen[v] || (i > 0 && got[i-1] >= v) {
				t.Errorf("picks %v not strictly increasing", got)
			}
			seen[v] = true
		}
		for _, end := range []int{0, c.ax - 1, c.ax, c.ax + c.co - 1} {
			if end >= 0 && end < c.ax+c.co && c.k >= 4 && !seen[end] {
				t.Errorf("%d axial, %d coronal, k=%d: endpoint %d dropped: %v", c.ax, c.co, c.k, end, got)
			}
		}
	}
	// Proportional: 60 axial and 19 coronal into 35 gives 27 and 8 (largest remainder 26.58→27, 8.42→8).
	got := SubsampleGroups(planes(60, 19), 35)
	ax := 0
	for _, v := range got {
		if v < 60 {
			ax++
		}
	}
	if ax != 27 {
		t.Errorf("axial share = %d, want 27", ax)
	}
}

func TestSplitReasoning(t *testing.T) {
	cases := []struct{ content, field, answer, thought string }{
		{"\\boxed{A}", "", "\\boxed{A}", ""},
		{"<think>T1 is bright fat</think>\n\\boxed{A}", "", "\\boxed{A}", "T1 is bright fat"},
		{"  <think>a</think>b", "field", "b", "field\na"},
		{"so it is T1</think>\\boxed{A}", "", "\\boxed{A}", "so it is T1"},
		{"<think>never closed \\boxed{B}", "", "", "never closed \\boxed{B}"},
		{"{\"n_stage\":\"N1\"}", "long reasoning", "{\"n_stage\":\"N1\"}", "long reasoning"},
	}
	for _, c := range cases {
		a, th := SplitReasoning(c.content, c.field)
		if a != c.answer || th != c.thought {
			t.Errorf("SplitReasoning(%q, %q) = %q, %q; want %q, %q", c.content, c.field, a, th, c.answer, c.thought)
		}
	}
}

func TestRequestKeyChangesWithWhatDecidesTheAnswer(t *testing.T) {
	base := func() (string, error) { return requestKey("M", "i", 0, "p", "img", 10, map[string]any{"a": 1}) }
	k0, _ := base()
	k1, _ := base()
	if k0 != k1 {
		t.Fatal("request key is not stable")
	}
	variants := []func() (string, error){
		func() (string, error) { return requestKey("M2", "i", 0, "p", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 1, "p", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p2", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img2", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img", 11, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img", 10, map[string]any{"a": 2}) },
	}
	for i, v := range variants {
		k, _ := v()
		if k == k0 {
			t.Errorf("variant %d has the same key", i)
		}
	}
}

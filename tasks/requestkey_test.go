package tasks

import "testing"

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

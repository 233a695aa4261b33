package simengine_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// policyItems are 40 single-image items with two wrong answers each.
func policyItems() ([]simkey.Item, [][]byte) {
	var items []simkey.Item
	var images [][]byte
	for i := range 40 {
		img := fakePNG(1000 + i)
		images = append(images, img)
		items = append(items, simkey.Item{
			ID: fmt.Sprintf("P%02d/pathology", i), Images: imageFingerprint(img),
			Right: "\\boxed{1}", Wrong: []string{"\\boxed{0}", "\\boxed{2}"}, Constant: "\\boxed{0}",
		})
	}
	return items, images
}

// expectedAnswer applies the documented right=P rule on its own: with
// h = sha256("<seed>|<model>|<id>"), right iff (h[0:8] >> 11) / 2^53 < p,
// else wrong[h[8:16] mod len(wrong)].
func expectedAnswer(seed int64, model string, it simkey.Item, p float64) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d|%s|%s", seed, model, it.ID)))
	if float64(binary.BigEndian.Uint64(h[:8])>>11)/(1<<53) < p {
		return it.Right
	}
	return it.Wrong[binary.BigEndian.Uint64(h[8:16])%uint64(len(it.Wrong))]
}

// askAll asks every item once and returns the answers in order.
func askAll(t *testing.T, p *engineProc, images [][]byte) []string {
	t.Helper()
	var out []string
	for i, img := range images {
		status, m := p.chat(imageMessage(fmt.Sprintf("Item %d: is there tumour? Answer \\boxed{0} or \\boxed{1}.", i),
			[][]byte{img}, map[string]any{"model": "Qwen3-VL-8B-Instruct"}))
		if status != http.StatusOK {
			t.Fatalf("item %d: %d %v", i, status, m)
		}
		out = append(out, content(t, m))
	}
	return out
}

func TestPolicyRightPIsDeterministicAcrossRestarts(t *testing.T) {
	t.Parallel()
	items, images := policyItems()
	key := writeKey(t, t.TempDir(), items)
	args := []string{"--sim-key", key, "--sim-policy", "right=0.5", "--sim-seed", "7", "--served-model-name", "Qwen3-VL-8B-Instruct"}

	var want []string
	rights, wrongPicks := 0, map[string]int{}
	for _, it := range items {
		a := expectedAnswer(7, "Qwen3-VL-8B-Instruct", it, 0.5)
		want = append(want, a)
		if a == it.Right {
			rights++
		} else {
			wrongPicks[a]++
		}
	}
	if rights < 10 || rights > 30 || len(wrongPicks) != 2 {
		t.Fatalf("the fixture is degenerate: %d right of 40, wrong picks %v", rights, wrongPicks)
	}

	first := start(t, args...)
	run1 := askAll(t, first, images)
	run2 := askAll(t, first, images)
	restarted := start(t, args...)
	run3 := askAll(t, restarted, images)
	for i := range want {
		if run1[i] != want[i] || run2[i] != want[i] || run3[i] != want[i] {
			t.Errorf("item %d: answers %q / %q / after restart %q, want %q", i, run1[i], run2[i], run3[i], want[i])
		}
	}
}

func TestPolicies(t *testing.T) {
	t.Parallel()
	items, images := policyItems()
	images = images[:8]
	key := writeKey(t, t.TempDir(), items)
	for _, c := range []struct {
		policy string
		check  func(i int, got string) bool
	}{
		{"oracle", func(i int, got string) bool { return got == items[i].Right }},
		{"right=0", func(i int, got string) bool { return got != items[i].Right && strings.HasPrefix(got, "\\boxed{") }},
		{"constant", func(i int, got string) bool { return got == items[i].Constant }},
		{"garbage", func(i int, got string) bool { return got != "" && !strings.ContainsAny(got, "\\{}0123456789") }},
	} {
		p := start(t, "--sim-key", key, "--sim-policy", c.policy, "--served-model-name", "Qwen3-VL-8B-Instruct")
		for i, got := range askAll(t, p, images) {
			if !c.check(i, got) {
				t.Errorf("policy %s, item %d: answered %q", c.policy, i, got)
			}
		}
	}
}

func TestUnmatchedRequestGetsGarbage(t *testing.T) {
	t.Parallel()
	items, _ := policyItems()
	p := start(t, "--sim-key", writeKey(t, t.TempDir(), items))
	status, m := p.chat(imageMessage("unknown item", [][]byte{fakePNG(-1)}, nil))
	if status != http.StatusOK || strings.Contains(content(t, m), "boxed") {
		t.Errorf("unmatched request = %d %q, want a garbage answer", status, content(t, m))
	}
	p.waitLog("no sim-key item matches the request (images fingerprint " + imageFingerprint(fakePNG(-1)))
}

func TestBadKeyFileExits1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeKey(t, dir, nil)
	p := spawn(t, "--sim-key", path+".missing")
	if st := p.waitExit(); st.ExitCode() != 1 || !strings.Contains(p.stderr.String(), "sim key") {
		t.Errorf("missing key file: exit %d, stderr %q", st.ExitCode(), p.stderr)
	}
}

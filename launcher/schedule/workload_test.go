package schedule

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// paperMixes is a realistic workload for the scheduler's tests: the
// request mix of the NPCBench paper's L3 and L6 tasks, as package
// tasks/npcbench's descriptors give it (its tests check that this copy
// matches them; the launcher itself knows no task).
func paperMixes(t testing.TB) []RequestMix {
	t.Helper()
	data, err := os.ReadFile("testdata/paper_mixes.json")
	if err != nil {
		t.Fatal(err)
	}
	var mixes []RequestMix
	if err := json.Unmarshal(data, &mixes); err != nil {
		t.Fatal(err)
	}
	return mixes
}

func TestMixWorkload(t *testing.T) {
	m := configs.Model{Name: "M"}
	one := RequestMix{Task: "overview", Requests: 69, MinImages: 1, MaxImages: 1, ImageTokens: ImageTokens(512, 1644),
		ImagePixels: 512 * 1644, TextTokens: 300, MaxTokens: 1024}
	want := Workload{Model: "M", Task: "overview", Requests: 69, PromptTokens: 69 * 1300, OutputTokens: 69 * 1024,
		Images: 69, ImagePixels: 69 * 512 * 1644}
	if got := MixWorkload(m, one); got != want {
		t.Errorf("one image a request: %+v, want %+v", got, want)
	}
	// 300 plane-group requests of 44..79 images: the counts spread evenly,
	// so their mean is 61.5 images.
	groups := RequestMix{Task: "groups", Requests: 300, MinImages: 44, MaxImages: 79, ImageTokens: 1000,
		ImagePixels: 512 * 1644, TextTokens: 800, MaxTokens: 8192}
	g := MixWorkload(m, groups)
	if want := int64(300*800 + 300*61.5*1000); g.PromptTokens != want {
		t.Errorf("groups prompt %d, want %d", g.PromptTokens, want)
	}
	if g.Images != 300*61.5 || g.PlaneGroups() != 300*61.5 {
		t.Errorf("groups images %d (%v plane groups), want 18450", g.Images, g.PlaneGroups())
	}
	// A structure card is 1536×2048: 3.74 plane groups to preprocess.
	cards := MixWorkload(m, RequestMix{Task: "cards", Requests: 100, MinImages: 27, MaxImages: 27,
		ImageTokens: ImageTokens(1536, 2048), ImagePixels: 1536 * 2048})
	if cards.Images != 2700 || math.Abs(cards.PlaneGroups()-2700*1536*2048/(512*1644.0)) > 1e-6 {
		t.Errorf("cards: %d images, %v plane groups", cards.Images, cards.PlaneGroups())
	}
	// max_images 35 caps every request (44 or more groups each).
	m.Tasks = map[string]configs.TaskSettings{"groups": {MaxTokens: 4096, MaxImages: 35}}
	if want := (Workload{Model: "M", Task: "groups", Requests: 300, PromptTokens: 300 * (800 + 35*1000), OutputTokens: 300 * 4096,
		Images: 300 * 35, ImagePixels: 300 * 35 * 512 * 1644}); MixWorkload(m, groups) != want {
		t.Errorf("capped %+v, want %+v", MixWorkload(m, groups), want)
	}
	// A 32,768-token context minus the 8,192 output budget bounds the prompt.
	short := MixWorkload(configs.Model{Name: "Short", ContextLength: 32768}, groups)
	if want := int64(300 * (32768 - 8192)); short.PromptTokens != want {
		t.Errorf("short-context prompt %d, want %d", short.PromptTokens, want)
	}
	// ... but every image is still sent and preprocessed.
	if short.Images != 300*61.5 {
		t.Errorf("short-context images %d, want 18450", short.Images)
	}
	text := MixWorkload(m, RequestMix{Task: "text", Requests: 217, TextTokens: 1500, MaxTokens: 1024})
	if text.Images != 0 || text.PromptTokens != 217*1500 {
		t.Errorf("text only: %+v", text)
	}
	if sum := g.Add(text); sum.Task != "" || sum.Requests != 517 || sum.Images != g.Images {
		t.Errorf("a mix of two tasks sums to %+v", sum)
	}
}

func TestImageTokens(t *testing.T) {
	for _, c := range []struct{ w, h, want int }{{512, 1644, 1000}, {1536, 1536, 2803}, {1536, 2048, 3737}} {
		if got := ImageTokens(c.w, c.h); got != c.want {
			t.Errorf("ImageTokens(%d, %d) = %d, want %d", c.w, c.h, got, c.want)
		}
	}
}

func TestEstimator(t *testing.T) {
	var e Estimator
	if got := e.Work(Workload{PromptTokens: 100, OutputTokens: 10}); got != 150 {
		t.Errorf("work %v, want 150 (decode cost 5)", got)
	}
	if got := e.Speed(configs.Model{ParamsB: 30, MoE: true}); got != 6000 {
		t.Errorf("MoE default speed %v, want 6000", got)
	}
	if got := e.Speed(configs.Model{ParamsB: 6}); got != 10000 {
		t.Errorf("dense default speed %v, want 10000", got)
	}
	m := configs.Model{WeightBytes: 32 << 30}
	if got := e.StartupTime(m, 2); got.Seconds() != 90+32 {
		t.Errorf("start-up %v, want 122 s (90 s + 2 s × 16 GiB per GPU)", got)
	}
}

package schedule

import (
	"fmt"
	"math"

	"github.com/npcorch/npcorch/configs"
)

// Workload is the estimated work one model does in a campaign, or in one
// task of it. A Config may list several workloads of one model, one per
// task: the image-preprocessing ceiling is then applied task by task, as
// the runner sends them one after the other.
type Workload struct {
	Model string `json:"model"`
	// Task is the task key when the workload is one task's requests, ""
	// for a mix of tasks.
	Task         string `json:"task,omitempty"`
	Requests     int    `json:"requests"`
	PromptTokens int64  `json:"prompt_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// Images counts the images sent with the requests (after max_images);
	// ImagePixels is their total area in pixels, what preprocessing costs
	// scale with (0: a 512×1644 plane group per image).
	Images      int64 `json:"images,omitempty"`
	ImagePixels int64 `json:"image_pixels,omitempty"`
}

// Add returns the sum of two workloads of the same model; the task is kept
// when both have the same one.
func (w Workload) Add(o Workload) Workload {
	if w.Task != o.Task {
		w.Task = ""
	}
	w.Requests += o.Requests
	w.PromptTokens += o.PromptTokens
	w.OutputTokens += o.OutputTokens
	w.Images += o.Images
	w.ImagePixels += o.ImagePixels
	return w
}

// planeGroupPixels is the area of one 512×1644 plane group, the unit of
// the image-preprocessing rate.
const planeGroupPixels = 512 * 1644

// PlaneGroups returns the workload's images in 512×1644 equivalents:
// ImagePixels / (512 × 1644), or Images when the pixels are not known.
func (w Workload) PlaneGroups() float64 {
	if w.ImagePixels > 0 {
		return float64(w.ImagePixels) / planeGroupPixels
	}
	return float64(w.Images)
}

// PaperTask is one task's request mix at the NPCBench paper's scale.
type PaperTask struct {
	// Key is the task key (configs.Task*).
	Key string
	// Requests is the number of requests.
	Requests int
	// MinImages and MaxImages bound the images per request; counts are spread
	// evenly between them over the requests.
	MinImages, MaxImages int
	// ImageTokens is the estimated tokens of one image, ImagePixels its
	// area.
	ImageTokens int
	ImagePixels int
	// TextTokens is the estimated prompt text per request.
	TextTokens int
	// MaxTokens is the output budget used when the model sets none.
	MaxTokens int
}

// imageTokens estimates an image's tokens from its size: about 1,000 for a
// 512×1644 plane group (Qwen2.5-VL ≈ 1,062, Qwen3-VL ≈ 816, InternVL3.5 ≈
// 1,024), proportional to the pixel count.
func imageTokens(w, h int) int {
	return int(math.Round(float64(w*h) / planeGroupPixels * 1000))
}

// PaperTasks lists the L3 and L6 request mix of the NPCBench paper: L3
// pathology 69, sequence 200, structure cards 2,700, T staging 400 (100
// requests of 27 cards, 300 of 44-79 plane groups), N staging 400 plane
// group requests; L6 100 pathology, 100 MRI (10 pages) and 217 care
// decisions. Geometry: panels 3×3 and cards and MRI pages 3×4 tiles of 512
// px; pathology overviews are taken as one plane group's worth.
func PaperTasks() []PaperTask {
	group, panel, card := 512*1644, 3*512*3*512, 3*512*4*512
	gt, pt, ct := imageTokens(512, 1644), imageTokens(3*512, 3*512), imageTokens(3*512, 4*512)
	return []PaperTask{
		{Key: configs.TaskPathology, Requests: 69, MinImages: 1, MaxImages: 1, ImageTokens: gt, ImagePixels: group, TextTokens: 300, MaxTokens: 1024},
		{Key: configs.TaskSequence, Requests: 200, MinImages: 1, MaxImages: 1, ImageTokens: pt, ImagePixels: panel, TextTokens: 300, MaxTokens: 1024},
		{Key: configs.TaskCard, Requests: 2700, MinImages: 1, MaxImages: 1, ImageTokens: ct, ImagePixels: card, TextTokens: 400, MaxTokens: 1024},
		{Key: configs.TaskTCards, Requests: 100, MinImages: 27, MaxImages: 27, ImageTokens: ct, ImagePixels: card, TextTokens: 800, MaxTokens: 8192},
		{Key: configs.TaskTGroups, Requests: 300, MinImages: 44, MaxImages: 79, ImageTokens: gt, ImagePixels: group, TextTokens: 800, MaxTokens: 8192},
		{Key: configs.TaskNGroups, Requests: 400, MinImages: 44, MaxImages: 79, ImageTokens: gt, ImagePixels: group, TextTokens: 800, MaxTokens: 8192},
		{Key: configs.TaskCPPathology, Requests: 100, MinImages: 1, MaxImages: 1, ImageTokens: gt, ImagePixels: group, TextTokens: 600, MaxTokens: 1024},
		{Key: configs.TaskCPMRI, Requests: 100, MinImages: 10, MaxImages: 10, ImageTokens: ct, ImagePixels: card, TextTokens: 1000, MaxTokens: 1024},
		{Key: configs.TaskCPCare, Requests: 217, TextTokens: 1500, MaxTokens: 1024},
	}
}

// PaperScale returns model m's workload for the given task keys at the
// paper's scale (all tasks when keys is empty), summed over the tasks; see
// PaperScaleTasks.
func PaperScale(m configs.Model, keys []string) (Workload, error) {
	parts, err := PaperScaleTasks(m, keys)
	if err != nil {
		return Workload{}, err
	}
	w := Workload{Model: m.Name}
	for i, p := range parts {
		if i == 0 {
			w.Task = p.Task
		}
		w = w.Add(p)
	}
	return w, nil
}

// PaperScaleTasks returns model m's workload at the paper's scale, one per
// task in PaperTasks order (all tasks when keys is empty). The model's task
// settings cap the images per request (max_images) and give the output
// budget (max_tokens, counted in full: the estimate is conservative); a
// prompt's tokens never exceed the model's context minus its output budget
// (the engine's own processor shrinks the images, as Hulu-Med's merge 4
// does), but every image is still sent and preprocessed.
func PaperScaleTasks(m configs.Model, keys []string) ([]Workload, error) {
	want := map[string]bool{}
	for _, k := range keys {
		if k == configs.TaskCarePath {
			want[configs.TaskCPPathology], want[configs.TaskCPMRI], want[configs.TaskCPCare] = true, true, true
			continue
		}
		if !configs.IsTask(k) {
			return nil, fmt.Errorf("workload for %s: unknown task %q; valid tasks: %v or %q", m.Name, k, configs.TaskKeys, configs.TaskCarePath)
		}
		want[k] = true
	}
	var out []Workload
	for _, t := range PaperTasks() {
		if len(want) > 0 && !want[t.Key] {
			continue
		}
		out = append(out, taskWorkload(m, t))
	}
	return out, nil
}

// taskWorkload sums one task's requests for model m.
func taskWorkload(m configs.Model, t PaperTask) Workload {
	set := m.Tasks[t.Key]
	budget := t.MaxTokens
	if set.MaxTokens > 0 {
		budget = set.MaxTokens
	}
	w := Workload{Model: m.Name, Task: t.Key, Requests: t.Requests, OutputTokens: int64(budget) * int64(t.Requests)}
	for i := range t.Requests {
		images := t.MinImages
		if t.Requests > 1 && t.MaxImages > t.MinImages {
			images += int(math.Round(float64(i*(t.MaxImages-t.MinImages)) / float64(t.Requests-1)))
		}
		if set.MaxImages > 0 {
			images = min(images, set.MaxImages)
		}
		w.Images += int64(images)
		w.ImagePixels += int64(images) * int64(t.ImagePixels)
		prompt := t.TextTokens + images*t.ImageTokens
		if m.ContextLength > 0 {
			prompt = min(prompt, max(m.ContextLength-budget, t.TextTokens))
		}
		w.PromptTokens += int64(prompt)
	}
	return w
}

// PaperScaleAll returns PaperScaleTasks for each model, in model order and
// then task order: several workloads per model, which Config accepts.
func PaperScaleAll(models []configs.Model, keys []string) ([]Workload, error) {
	var out []Workload
	for _, m := range models {
		parts, err := PaperScaleTasks(m, keys)
		if err != nil {
			return nil, err
		}
		out = append(out, parts...)
	}
	return out, nil
}

package schedule

import (
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

// RequestMix is one task's requests as the planner counts them: how
// many, the images each carries, the tokens of their text and their output
// budget. It is all the launcher knows of a task; the tasks' own
// descriptors (package tasks) give it, at the paper's scale or any other.
type RequestMix struct {
	// Task is the task's key, by which the model's task settings
	// (max_images, max_tokens) are found.
	Task string `json:"task"`
	// Requests is the number of requests.
	Requests int `json:"requests"`
	// MinImages and MaxImages bound the images per request; counts are spread
	// evenly between them over the requests.
	MinImages int `json:"min_images"`
	MaxImages int `json:"max_images"`
	// ImageTokens is the estimated tokens of one image, ImagePixels its
	// area.
	ImageTokens int `json:"image_tokens"`
	ImagePixels int `json:"image_pixels"`
	// TextTokens is the estimated prompt text per request.
	TextTokens int `json:"text_tokens"`
	// MaxTokens is the output budget used when the model sets none.
	MaxTokens int `json:"max_tokens"`
}

// ImageTokens estimates an image's tokens from its size: about 1,000 for a
// 512×1644 plane group (Qwen2.5-VL ≈ 1,062, Qwen3-VL ≈ 816, InternVL3.5 ≈
// 1,024), proportional to the pixel count.
func ImageTokens(w, h int) int {
	return int(math.Round(float64(w*h) / planeGroupPixels * 1000))
}

// MixWorkload is model m's workload of one request mix. The model's task
// settings cap the images per request (max_images) and give the output
// budget (max_tokens, counted in full: the estimate is conservative); a
// prompt's tokens never exceed the model's context minus its output budget
// (the engine's own processor shrinks the images, as Hulu-Med's merge 4
// does), but every image is still sent and preprocessed.
func MixWorkload(m configs.Model, t RequestMix) Workload {
	set := m.Tasks[t.Task]
	budget := t.MaxTokens
	if set.MaxTokens > 0 {
		budget = set.MaxTokens
	}
	w := Workload{Model: m.Name, Task: t.Task, Requests: t.Requests, OutputTokens: int64(budget) * int64(t.Requests)}
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

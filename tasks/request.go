package tasks

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// Request is one prepared request: the item, the exact images sent, the
// prompt, and the key that identifies it in the journal.
type Request struct {
	Item   Item
	Repeat int
	// Key is the sha256 of everything that decides the answer: model, item,
	// repeat, prompt text, image hashes and sampling settings.
	Key    string
	Prompt string
	// Prior are the "Prior diagnostic findings" lines of a care question.
	Prior  []string
	Images []dataset.Image
	Body   openai.ChatCompletionRequest
	// Bytes is the size of the images as sent (base64 or URL text).
	Bytes int64
}

// RequestBuilder turns items into requests for one model.
type RequestBuilder struct {
	Model configs.Model
	// Media is configs.MediaFile or configs.MediaBase64.
	Media string
	// Root is the prepared dataset folder image paths are relative to.
	Root string
	// MaxBytes caps the images of one request (0 = no cap).
	MaxBytes int64
}

// Build makes the request of item it for the given repeat; prior holds the
// care question's prior findings (nil otherwise). Image files are checked
// against the manifest (size, and sha256 when their bytes are read), so an
// image changed after `npcorch prep` is refused, never sent.
func (b RequestBuilder) Build(prompts *Prompts, it Item, repeat int, prior []string) (*Request, error) {
	prompt, err := prompts.Render(it, prior)
	if err != nil {
		return nil, err
	}
	settings := b.Model.Tasks[it.Task]
	images, err := b.Images(it)
	if err != nil {
		return nil, err
	}
	parts := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: prompt}}
	var total int64
	h := sha256.New()
	for _, img := range images {
		url, n, err := b.imageURL(it, img)
		if err != nil {
			return nil, err
		}
		total += n
		if b.MaxBytes > 0 && total > b.MaxBytes {
			return nil, fmt.Errorf("item %s: images add up to more than %d bytes for model %s; raise client.max_request_bytes or use media: file",
				it.ID, b.MaxBytes, b.Model.Name)
		}
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{URL: url}})
		fmt.Fprintf(h, "%s\n", img.SHA256)
	}
	body := openai.ChatCompletionRequest{
		Model:              b.Model.Name,
		Messages:           []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, MultiContent: parts}},
		Stream:             true,
		StreamOptions:      &openai.StreamOptions{IncludeUsage: true},
		ChatTemplateKwargs: b.Model.ChatTemplateKwargs,
	}
	if usesCompletionTokens(b.Model) {
		body.MaxCompletionTokens = settings.MaxTokens
	} else {
		body.MaxTokens = settings.MaxTokens
	}
	key, err := requestKey(b.Model.Name, it.ID, repeat, prompt, hex.EncodeToString(h.Sum(nil)), settings.MaxTokens, b.Model.ChatTemplateKwargs)
	if err != nil {
		return nil, err
	}
	return &Request{Item: it, Repeat: repeat, Key: key, Prompt: prompt, Prior: prior, Images: images, Body: body, Bytes: total}, nil
}

// Images returns the images the model is sent for an item: all of them, or
// for plane groups beyond the model's max_images a sub-sample.
func (b RequestBuilder) Images(it Item) ([]dataset.Image, error) {
	limit := b.Model.Tasks[it.Task].MaxImages
	if limit <= 0 || len(it.Images) <= limit {
		return it.Images, nil
	}
	if len(it.Planes) != len(it.Images) {
		return nil, fmt.Errorf("item %s: %d images exceed model %s's limit of %d for task %s, and they are not plane groups that can be sub-sampled; raise tasks.%s.max_images",
			it.ID, len(it.Images), b.Model.Name, limit, it.Task, it.Task)
	}
	return pick(it.Images, imaging.SampleGroups(it.Planes, limit)), nil
}

// imageURL returns the image as a file:// URL or a base64 data URL of the
// file's own bytes, and the bytes that adds to the request.
func (b RequestBuilder) imageURL(it Item, img dataset.Image) (string, int64, error) {
	path, err := resolveInside(b.Root, img.Path)
	if err != nil {
		return "", 0, fmt.Errorf("item %s: %w", it.ID, err)
	}
	if b.Media == configs.MediaFile {
		st, err := os.Stat(path)
		if err != nil {
			return "", 0, fmt.Errorf("item %s: image %s: %w; run `npcorch prep` again", it.ID, img.Path, err)
		}
		if img.Bytes > 0 && st.Size() != img.Bytes {
			return "", 0, fmt.Errorf("item %s: image %s has %d bytes but the manifest says %d; it changed after `npcorch prep`, run prep again",
				it.ID, img.Path, st.Size(), img.Bytes)
		}
		url := "file://" + path
		return url, int64(len(url)), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, fmt.Errorf("item %s: image %s: %w; run `npcorch prep` again", it.ID, img.Path, err)
	}
	if sum := sha256.Sum256(data); img.SHA256 != "" && hex.EncodeToString(sum[:]) != img.SHA256 {
		return "", 0, fmt.Errorf("item %s: image %s does not match the sha256 in the manifest; it changed after `npcorch prep`, run prep again",
			it.ID, img.Path)
	}
	url := "data:" + mimeType(path) + ";base64," + base64.StdEncoding.EncodeToString(data)
	return url, int64(len(url)), nil
}

// resolveInside joins root and a manifest path, refusing absolute paths and
// paths that leave root (symbolic links included).
func resolveInside(root, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return "", fmt.Errorf("image path %q must be relative to the prepared folder", rel)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	p := filepath.Join(absRoot, filepath.FromSlash(rel))
	if !within(absRoot, p) {
		return "", fmt.Errorf("image path %q leaves the prepared folder %s", rel, absRoot)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		realRoot, rerr := filepath.EvalSymlinks(absRoot)
		if rerr == nil && !within(realRoot, real) {
			return "", fmt.Errorf("image path %q links outside the prepared folder %s", rel, absRoot)
		}
	}
	return p, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func mimeType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	default:
		return "image/png"
	}
}

// usesCompletionTokens reports whether the endpoint wants
// max_completion_tokens (OpenAI's reasoning models) instead of max_tokens.
func usesCompletionTokens(m configs.Model) bool {
	if m.Engine.Kind != configs.EngineExternal {
		return false
	}
	n := strings.ToLower(m.Name)
	return strings.HasPrefix(n, "gpt-5") || strings.HasPrefix(n, "o1") || strings.HasPrefix(n, "o3") || strings.HasPrefix(n, "o4")
}

func requestKey(model, item string, repeat int, prompt, images string, maxTokens int, kwargs map[string]any) (string, error) {
	// json.Marshal sorts map keys, so the key is stable.
	data, err := json.Marshal(struct {
		Model       string         `json:"model"`
		Item        string         `json:"item"`
		Repeat      int            `json:"repeat"`
		Prompt      string         `json:"prompt"`
		Images      string         `json:"images"`
		Temperature float64        `json:"temperature"`
		MaxTokens   int            `json:"max_tokens"`
		Kwargs      map[string]any `json:"chat_template_kwargs,omitempty"`
	}{model, item, repeat, prompt, images, 0, maxTokens, kwargs})
	if err != nil {
		return "", fmt.Errorf("request key for %s: %w", item, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

func pick(images []dataset.Image, idx []int) []dataset.Image {
	out := make([]dataset.Image, len(idx))
	for i, j := range idx {
		out[i] = images[j]
	}
	return out
}

package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/inference"
)

// Request is one prepared request: the item, the exact images sent, the
// prompt, and the key that identifies it in the journal.
//
// With base64 media the image URLs in Body are placeholders
// (inference.InlinePlaceholder followed by the image's index, one per
// image of Inline): inference.Client.Send streams
// each file's own bytes, base64-encoded, in their place, so no request ever
// holds its images in memory. Send a Request with Client.Send, not its
// Body with Client.Stream.
type Request struct {
	Item   Item
	Repeat int
	// Key is the sha256 of everything that decides the answer: model, item,
	// repeat, prompt text, image hashes and sampling settings.
	Key    string
	Prompt string
	// Prior are the "Prior diagnostic findings" lines of a care question.
	Prior []string
	// Turns are the earlier turns of a serial conversation the request
	// replays before Prompt, oldest first.
	Turns  []Turn
	Images []dataset.Image
	Body   openai.ChatCompletionRequest
	// Bytes is the size of the images as sent (base64 or URL text).
	Bytes int64

	Inline []inference.InlineImage
	keyIn  keyInput
}

// ForRepeat returns the request of another repeat of the same item: the
// same body and images under that repeat's key. What a request sends does
// not depend on its repeat, so the runner builds an item that needs no
// other answer once and sends it again for each repeat, instead of
// rendering its prompt and checking its images once a repeat.
func (r *Request) ForRepeat(repeat int) (*Request, error) {
	if r.keyIn.model == "" {
		return nil, fmt.Errorf("item %s: its request was not made by a RequestBuilder, so its key for repeat %d is unknown", r.Item.ID, repeat)
	}
	key, err := r.keyIn.key(repeat)
	if err != nil {
		return nil, err
	}
	c := *r
	c.Repeat, c.Key = repeat, key
	return &c, nil
}

// RequestBuilder turns items into requests for one model.
type RequestBuilder struct {
	Model configs.Model
	// Media is configs.MediaFile or configs.MediaBase64.
	Media configs.MediaMode
	// Root is the prepared dataset folder image paths are relative to.
	Root string
	// MaxBytes caps the images of one request (0 = no cap).
	MaxBytes int64
}

// Turn is one earlier turn of a serial conversation: the prompt the model
// was sent and the answer it gave, replayed as a user and an assistant
// message.
type Turn struct {
	Prompt string `json:"prompt"`
	Reply  string `json:"reply"`
}

// Build makes the request of item it for the given repeat; prior holds the
// care question's prior findings (nil otherwise). Image files are checked
// against the manifest (size, and sha256 when their bytes are read), so an
// image changed after `npcorch prep` is refused, never sent.
func (b RequestBuilder) Build(prompts *Prompts, it Item, repeat int, prior []string) (*Request, error) {
	return b.BuildTurns(prompts, it, repeat, prior, nil)
}

// BuildTurns is Build for a turn of a serial conversation: the request
// replays the earlier turns, each prompt as a user message and its answer
// as the assistant's, before the item's own prompt and images. The
// request key covers the whole conversation, so a turn is asked again
// when an answer it replays changes.
func (b RequestBuilder) BuildTurns(prompts *Prompts, it Item, repeat int, prior []string, turns []Turn) (*Request, error) {
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
	var inline []inference.InlineImage
	hashes := make([]string, len(images))
	res, err := newResolver(b.Root)
	if err != nil {
		return nil, fmt.Errorf("item %s: %w", it.ID, err)
	}
	for i, img := range images {
		url, n, im, err := b.imageURL(res, it, img)
		if err != nil {
			return nil, err
		}
		if im != nil {
			url = inference.InlinePlaceholder + strconv.Itoa(len(inline))
			inline = append(inline, *im)
		}
		total += n
		if b.MaxBytes > 0 && total > b.MaxBytes {
			return nil, fmt.Errorf("item %s: images add up to more than %d bytes for model %s; raise client.max_request_bytes or use media: file",
				it.ID, b.MaxBytes, b.Model.Name)
		}
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{URL: url}})
		hashes[i] = img.SHA256
	}
	var msgs []openai.ChatCompletionMessage
	for _, t := range turns {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.Prompt},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: t.Reply})
	}
	body := openai.ChatCompletionRequest{
		Model:              b.Model.ServedName(),
		Messages:           append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, MultiContent: parts}),
		Stream:             true,
		StreamOptions:      &openai.StreamOptions{IncludeUsage: true},
		ChatTemplateKwargs: b.Model.ChatTemplateKwargs,
	}
	if j := it.Consult; j != nil && j.Judged != nil {
		settings.MaxTokens = judgeSettings(&body, b.Model.ReasoningEffort, prompts.tasks[it.Task], j.Judged, settings.MaxTokens)
	}
	if usesCompletionTokens(b.Model) {
		body.MaxCompletionTokens = settings.MaxTokens
	} else {
		body.MaxTokens = settings.MaxTokens
	}
	ki := keyInput{model: b.Model.Name, item: it.ID, prompt: conversation(turns, prompt), images: keyImages(hashes),
		maxTokens: settings.MaxTokens, kwargs: b.Model.ChatTemplateKwargs}
	key, err := ki.key(repeat)
	if err != nil {
		return nil, err
	}
	return &Request{Item: it, Repeat: repeat, Key: key, Prompt: prompt, Prior: prior, Turns: turns, Images: images, Body: body,
		Bytes: total, Inline: inline, keyIn: ki}, nil
}

// conversation is the text the request key takes for the prompt: the
// prompt itself for a request of one message (as keys were first
// defined), else every turn's prompt and answer, then the prompt, each
// prefixed by its role.
func conversation(turns []Turn, prompt string) string {
	if len(turns) == 0 {
		return prompt
	}
	var b strings.Builder
	for _, t := range turns {
		b.WriteString("\x00user\x00" + t.Prompt + "\x00assistant\x00" + t.Reply)
	}
	b.WriteString("\x00user\x00" + prompt)
	return b.String()
}

// judgeSettings sets a judge's request as the paper ran its judge (the
// model's reasoning effort, else the task's) at the attempt's rung of
// JudgeAttempts, and returns its output allowance. Greedy decoding with
// top-p 1 is every request's: the client sends temperature 0 and top_p 1
// on the wire (bodyWriter), so the body leaves them unset.
func judgeSettings(body *openai.ChatCompletionRequest, effort string, task *Task, j *Judged, maxTokens int) int {
	if effort == "" && task != nil {
		effort = task.JudgeEffort
	}
	if effort != "none" {
		body.ReasoningEffort = effort
	}
	rungs := JudgeAttempts()
	rung := rungs[min(max(j.Attempt, 0), len(rungs)-1)]
	if rung.Schema {
		body.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "verdict", Schema: extract.VerdictSchema(), Strict: true}}
	}
	if rung.MaxTokens > 0 {
		return rung.MaxTokens
	}
	return maxTokens
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

// imageURL returns the image as a file:// URL, or as an inline image that
// Client.Send streams as the base64 data URL of the file's own bytes, and
// the bytes that adds to the request. The file must have the manifest's
// size; with base64 its sha256 is checked as it is streamed.
func (b RequestBuilder) imageURL(res *resolver, it Item, img dataset.Image) (string, int64, *inference.InlineImage, error) {
	path, info, err := res.resolve(img.Path)
	if err != nil {
		return "", 0, nil, fmt.Errorf("item %s: %w", it.ID, err)
	}
	if info == nil {
		return "", 0, nil, fmt.Errorf("item %s: image %s: %w; run `npcorch prep` again", it.ID, img.Path, fs.ErrNotExist)
	}
	if !info.Mode().IsRegular() {
		return "", 0, nil, fmt.Errorf("item %s: image %s is not a regular file; run `npcorch prep` again", it.ID, img.Path)
	}
	if img.Bytes > 0 && info.Size() != img.Bytes {
		return "", 0, nil, fmt.Errorf("item %s: image %s has %d bytes but the manifest says %d; it changed after `npcorch prep`, run prep again",
			it.ID, img.Path, info.Size(), img.Bytes)
	}
	if b.Media == configs.MediaFile {
		url := "file://" + path
		return url, int64(len(url)), nil, nil
	}
	im := &inference.InlineImage{Path: path, MIME: mimeType(path), Size: info.Size(), SHA256: img.SHA256}
	return "", im.DataURLLen(), im, nil
}

// resolver maps manifest paths to files under one root, refusing absolute
// paths and paths that leave the root, symbolic links included. It
// resolves the root once and checks each folder below it once, so a
// request of 80 images costs about one lstat per image.
type resolver struct {
	absRoot, realRoot string
	dirs              map[string]error
}

func newResolver(root string) (*resolver, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("prepared folder %s: %w", root, err)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		realRoot = absRoot // a missing root: every image is then reported missing
	}
	return &resolver{absRoot: absRoot, realRoot: realRoot, dirs: map[string]error{}}, nil
}

// resolve returns the file of a manifest path and its information (nil
// when the file does not exist).
func (r *resolver) resolve(rel string) (string, fs.FileInfo, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return "", nil, fmt.Errorf("image path %q must be relative to the prepared folder", rel)
	}
	p := filepath.Join(r.absRoot, filepath.FromSlash(rel))
	if !within(r.absRoot, p) {
		return "", nil, fmt.Errorf("image path %q leaves the prepared folder %s", rel, r.absRoot)
	}
	if err := r.checkDir(rel, filepath.Dir(p)); err != nil {
		return "", nil, err
	}
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("image %s: %w", rel, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		if err := r.checkLink(rel, p); err != nil {
			return "", nil, err
		}
		if info, err = os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		} else if err != nil {
			return "", nil, fmt.Errorf("image %s: %w", rel, err)
		}
	}
	return p, info, nil
}

// checkDir checks that dir, a folder at or below the root, does not lead
// outside it through a symbolic link.
func (r *resolver) checkDir(rel, dir string) error {
	if dir == r.absRoot {
		return nil
	}
	if err, ok := r.dirs[dir]; ok {
		return err
	}
	err := r.checkDir(rel, filepath.Dir(dir))
	if err == nil {
		if info, lerr := os.Lstat(dir); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
			err = r.checkLink(rel, dir)
		}
	}
	r.dirs[dir] = err
	return err
}

func (r *resolver) checkLink(rel, p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil // a dangling link: the file is reported missing
	}
	if !within(r.realRoot, real) {
		return fmt.Errorf("image path %q links outside the prepared folder %s", rel, r.absRoot)
	}
	return nil
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

// noImages is what the request key records for a request without
// images: the sha256 of nothing, as keys were first defined, so that the
// journals of earlier runs resume.
const noImages = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// keyImages is the part of the request key the images give: their sim-key
// fingerprint (noImages for none).
func keyImages(sha256s []string) string {
	if len(sha256s) == 0 {
		return noImages
	}
	return simkey.Fingerprint(sha256s)
}

// keyInput is what a request's key covers but its repeat.
type keyInput struct {
	model, item, prompt, images string
	maxTokens                   int
	kwargs                      map[string]any
}

func (k keyInput) key(repeat int) (string, error) {
	return requestKey(k.model, k.item, repeat, k.prompt, k.images, k.maxTokens, k.kwargs)
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

package simkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Format is the format tag of a sim key file.
const Format = "npcorch-simkey/1"

// Key is a sim key file: the answers the simulated engine gives.
//
//	{"format":"npcorch-simkey/1","items":[{"id":"pathology/P01","images":"<fingerprint>",
//	  "contains":"<optional substring>","right":"\\boxed{1}","wrong":["\\boxed{0}"],"constant":"\\boxed{0}"}]}
type Key struct {
	// Format must be Format.
	Format string `json:"format"`
	// Items are matched against each request in order; the first match wins.
	Items []Item `json:"items"`
}

// Item recognises the requests of one benchmark item, by the fingerprint
// of their images and, when set, a substring of their text, and gives its
// answers.
type Item struct {
	// ID names the item; with the seed and the served model name it decides
	// whether the item is answered right.
	ID string `json:"id"`
	// Images is the Fingerprint of the request's images ("" for none).
	Images string `json:"images"`
	// Contains, when non-empty, must be a substring of the request's text
	// (every text part of every message, joined by "\n").
	Contains string `json:"contains,omitempty"`
	// Also are further substrings the request's text must contain, all
	// of them (the parts of a prompt around a text that varies).
	Also []string `json:"also,omitempty"`
	// Right is the correct answer, Wrong the incorrect ones, Constant the
	// answer of the constant policy.
	Right    string   `json:"right"`
	Wrong    []string `json:"wrong,omitempty"`
	Constant string   `json:"constant,omitempty"`
	// Parts, when set, compose the answer statement by statement instead
	// of Right and Wrong: a free-text answer that meets some criteria and
	// misses others (see Part).
	Parts []Part `json:"parts,omitempty"`
	// Verdict, when set, makes the item a judge's: its answer is a verdict
	// on the text the request shows (see Verdict).
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Part is one statement of a composed answer. The simulated engine says
// a right part with the probability its policy gives a right answer, and
// a wrong part (an error) with the complement, each decided on its own
// from the item's and the part's id; the oracle says every right part
// and no wrong one.
type Part struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Right bool   `json:"right"`
}

// Verdict is what a judge item judges: whether the response the request
// shows says Claim (a statement of a composed answer). The response is
// the request's text after the first From and before the next To (the
// headings around it in the judge's prompt; an empty one is the text's
// start or end). The right verdict is criteria_met true when the
// response contains Claim, false otherwise; the engine answers it as
// JSON {"explanation", "criteria_met"}.
type Verdict struct {
	Claim string `json:"claim"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
}

// Response is the part of a judge's request text the verdict is on: after
// the first From, before the next To; "" when From is not there.
func (v *Verdict) Response(text string) string {
	if v.From != "" {
		_, after, ok := strings.Cut(text, v.From)
		if !ok {
			return ""
		}
		text = after
	}
	if v.To != "" {
		text, _, _ = strings.Cut(text, v.To)
	}
	return text
}

// Fingerprint identifies the images of one request, in order: the
// lowercase hex SHA-256 of the concatenation of each image's lowercase hex
// SHA-256 followed by "\n". A request without images has fingerprint "".
func Fingerprint(sha256s []string) string {
	if len(sha256s) == 0 {
		return ""
	}
	h := sha256.New()
	for _, s := range sha256s {
		h.Write([]byte(s + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Load reads and checks a sim key file.
func Load(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim key: %w (pass the file npcorch wrote with --sim-key)", err)
	}
	var k Key
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("sim key %s: not a valid %s file: %w", path, Format, err)
	}
	if k.Format != Format {
		return nil, fmt.Errorf("sim key %s: format is %q, want %q (regenerate it with this npcorch)", path, k.Format, Format)
	}
	for i, it := range k.Items {
		if it.ID == "" {
			return nil, fmt.Errorf("sim key %s: item %d has no id", path, i)
		}
		if it.Images != "" && !isHexSHA256(it.Images) {
			return nil, fmt.Errorf("sim key %s: item %s: images %q is not a lowercase hex sha256 fingerprint", path, it.ID, it.Images)
		}
		if it.Verdict != nil && it.Verdict.Claim == "" {
			return nil, fmt.Errorf("sim key %s: item %s: a verdict needs the claim it looks for", path, it.ID)
		}
	}
	return &k, nil
}

// Write writes the key as indented JSON.
func (k *Key) Write(path string) error {
	data, err := json.MarshalIndent(k, "", " ")
	if err != nil {
		return fmt.Errorf("sim key %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write sim key: %w", err)
	}
	return nil
}

// Match returns the first item whose fingerprint equals images and whose
// Contains and Also (if any) all occur in text, or nil.
func (k *Key) Match(images, text string) *Item {
	if k == nil {
		return nil
	}
	for i := range k.Items {
		it := &k.Items[i]
		if it.Images == images && (it.Contains == "" || strings.Contains(text, it.Contains)) && containsAll(text, it.Also) {
			return it
		}
	}
	return nil
}

func containsAll(text string, subs []string) bool {
	for _, s := range subs {
		if !strings.Contains(text, s) {
			return false
		}
	}
	return true
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

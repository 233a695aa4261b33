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
	// Right is the correct answer, Wrong the incorrect ones, Constant the
	// answer of the constant policy.
	Right    string   `json:"right"`
	Wrong    []string `json:"wrong,omitempty"`
	Constant string   `json:"constant,omitempty"`
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
// Contains (if any) occurs in text, or nil.
func (k *Key) Match(images, text string) *Item {
	if k == nil {
		return nil
	}
	for i := range k.Items {
		it := &k.Items[i]
		if it.Images == images && (it.Contains == "" || strings.Contains(text, it.Contains)) {
			return it
		}
	}
	return nil
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

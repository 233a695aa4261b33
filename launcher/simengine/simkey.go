package simengine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// KeyFormat is the format tag of a sim key file.
const KeyFormat = "npcorch-simkey/1"

// Key is a sim key file: the answers the simulated engine gives. npcorch's
// task code writes it next to the prepared dataset; --sim-key names it.
//
//	{"format":"npcorch-simkey/1","items":[{"id":"P01/pathology","images":"<fingerprint>",
//	  "contains":"<optional substring>","right":"\\boxed{1}","wrong":["\\boxed{0}"],"constant":"\\boxed{0}"}]}
type Key struct {
	// Format must be KeyFormat.
	Format string `json:"format"`
	// Items are matched against each request in order; the first match wins.
	Items []KeyItem `json:"items"`
}

// KeyItem is the answer set of one benchmark item.
type KeyItem struct {
	// ID names the item; with the seed and the served model name it decides
	// whether the item is answered right (see Decide).
	ID string `json:"id"`
	// Images is the ImageFingerprint of the request's images ("" for none).
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

// LoadKey reads and checks a sim key file.
func LoadKey(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim key: %w (pass the file npcorch wrote with --sim-key)", err)
	}
	var k Key
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("sim key %s: not a valid %s file: %w", path, KeyFormat, err)
	}
	if k.Format != KeyFormat {
		return nil, fmt.Errorf("sim key %s: format is %q, want %q (regenerate it with this npcorch)", path, k.Format, KeyFormat)
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

// ImageFingerprint identifies the images of one request, in order: the
// lowercase hex SHA-256 of the concatenation of each image's lowercase hex
// SHA-256 followed by "\n". A request without images has fingerprint "".
func ImageFingerprint(images ...[]byte) string {
	hashes := make([]string, len(images))
	for i, img := range images {
		sum := sha256.Sum256(img)
		hashes[i] = hex.EncodeToString(sum[:])
	}
	return fingerprintOfHashes(hashes)
}

// fingerprintOfHashes is ImageFingerprint over already hashed images.
func fingerprintOfHashes(hashes []string) string {
	if len(hashes) == 0 {
		return ""
	}
	h := sha256.New()
	for _, s := range hashes {
		h.Write([]byte(s + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// match returns the first item whose fingerprint equals images and whose
// Contains (if any) occurs in text, or nil.
func (k *Key) match(images, text string) *KeyItem {
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

// Decide is the right/wrong decision of the right=P policy for one item and
// one served model, and the index of the wrong answer to give otherwise.
// With h = SHA-256 of "<seed>|<model>|<itemID>" (seed in decimal):
// u = (big-endian uint64 of h[0:8]) >> 11, as a fraction of 2^53;
// right = u < p; wrongIndex = big-endian uint64 of h[8:16] mod nWrong
// (0 when nWrong is 0). The same inputs always give the same answer.
func Decide(seed int64, model, itemID string, p float64, nWrong int) (right bool, wrongIndex int) {
	h := sha256.Sum256([]byte(strconv.FormatInt(seed, 10) + "|" + model + "|" + itemID))
	u := float64(binary.BigEndian.Uint64(h[0:8])>>11) / (1 << 53)
	if nWrong > 0 {
		wrongIndex = int(binary.BigEndian.Uint64(h[8:16]) % uint64(nWrong))
	}
	return u < p, wrongIndex
}

// policyKind names how answers are chosen.
type policyKind int

const (
	policyRight    policyKind = iota // right with probability P
	policyConstant                   // always the item's constant answer
	policyGarbage                    // an unparseable sentence
)

// policy is the parsed --sim-policy.
type policy struct {
	kind policyKind
	p    float64
}

func parsePolicy(s string) (policy, error) {
	switch {
	case s == "oracle":
		return policy{kind: policyRight, p: 1}, nil
	case s == "constant":
		return policy{kind: policyConstant}, nil
	case s == "garbage":
		return policy{kind: policyGarbage}, nil
	case strings.HasPrefix(s, "right="):
		p, err := strconv.ParseFloat(strings.TrimPrefix(s, "right="), 64)
		if err != nil || p < 0 || p > 1 {
			return policy{}, fmt.Errorf("%q: P must be a number in [0, 1]", s)
		}
		return policy{kind: policyRight, p: p}, nil
	}
	return policy{}, errors.New("invalid choice: '" + s + "' (choose from 'right=P', 'oracle', 'constant', 'garbage')")
}

// garbageAnswers are replies no answer extractor can parse.
var garbageAnswers = [...]string{
	"Unable to reach a conclusion from the images provided.",
	"The findings are not clear enough to say anything definite here.",
	"Further imaging and clinical correlation would be needed before answering.",
	"This question cannot be answered with the information available.",
}

// garbage picks an unparseable reply, deterministically from key.
func garbage(key string) string {
	h := sha256.Sum256([]byte(key))
	return garbageAnswers[int(h[0])%len(garbageAnswers)]
}

// answer returns the reply the policy gives to item for the served model.
func (p policy) answer(seed int64, model string, it *KeyItem) string {
	switch p.kind {
	case policyConstant:
		if it.Constant != "" {
			return it.Constant
		}
	case policyRight:
		right, wi := Decide(seed, model, it.ID, p.p, len(it.Wrong))
		if right {
			return it.Right
		}
		if len(it.Wrong) > 0 {
			return it.Wrong[wi]
		}
	}
	return garbage(strconv.FormatInt(seed, 10) + "|" + model + "|" + it.ID)
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

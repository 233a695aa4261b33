package simengine

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/launcher/simkey"
)

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
func (p policy) answer(seed int64, model string, it *simkey.Item) string {
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

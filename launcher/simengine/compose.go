package simengine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// Free-text answers and verdicts: a key item with Parts is answered by a
// composed text that says some statements and not others; a key item with
// a Verdict is a judge's, answered with a JSON verdict on whether the
// request's text says the claim.

// noStatement is the composed answer that says none of its parts.
const noStatement = "No specific recommendation can be made from the information given."

// compose says each right part of it when the policy decides the part
// right, and each wrong part when it decides the part wrong, in the key's
// order: with u the part's draw (Decide on the item's id, "#" and the
// part's id), a right part is said when u < p, a wrong one when u ≥ p.
func (p policy) compose(seed int64, model string, it *simkey.Item) string {
	switch p.kind {
	case policyConstant:
		if it.Constant != "" {
			return it.Constant
		}
		return noStatement
	case policyGarbage:
		return garbage(strconv.FormatInt(seed, 10) + "|" + model + "|" + it.ID)
	}
	var said []string
	for _, part := range it.Parts {
		right, _ := Decide(seed, model, PartID(it.ID, part.ID), p.p, 0)
		if right == part.Right {
			said = append(said, part.Text)
		}
	}
	if len(said) == 0 {
		return noStatement
	}
	return strings.Join(said, " ")
}

// PartID is the id Decide draws a part of a composed answer on.
func PartID(item, part string) string { return item + "#" + part }

// verdict answers a judge's item on the request's text: the right verdict
// (criteria_met: the response the text shows holds the claim) with the policy's probability,
// drawn per request (Decide on the item's id, "|" and the first 16 hex
// digits of the text's sha256), the other one otherwise. Constant always
// says false; garbage says no JSON at all, except under constrained
// decoding (structured), where the form is forced and the verdict is
// the right one.
func (p policy) verdict(seed int64, model string, it *simkey.Item, text string, structured bool) string {
	truth := strings.Contains(it.Verdict.Response(text), it.Verdict.Claim)
	switch {
	case p.kind == policyConstant:
		return verdictJSON(false, "The response does not clearly address the rubric item.")
	case p.kind == policyGarbage && !structured:
		return garbage(strconv.FormatInt(seed, 10) + "|" + model + "|" + it.ID + "|" + text)
	case p.kind == policyGarbage:
		return rightVerdict(truth, it.Verdict.Claim)
	}
	right, _ := Decide(seed, model, VerdictID(it.ID, text), p.p, 0)
	if right {
		return rightVerdict(truth, it.Verdict.Claim)
	}
	return verdictJSON(!truth, "The response was misread.")
}

// VerdictID is the id Decide draws a judge's verdict on: the key item's
// id, "|", and the first 16 hex digits of the sha256 of the request's text
// (so each response judged has its own draw).
func VerdictID(item, text string) string {
	sum := sha256.Sum256([]byte(text))
	return item + "|" + hex.EncodeToString(sum[:8])
}

func rightVerdict(truth bool, claim string) string {
	if truth {
		return verdictJSON(true, "The response says: "+claim)
	}
	return verdictJSON(false, "The response does not say: "+claim)
}

// verdictJSON writes a verdict as prompt A15 asks for it.
func verdictJSON(met bool, explanation string) string {
	e, _ := json.Marshal(explanation)
	return fmt.Sprintf(`{"explanation": %s, "criteria_met": %t}`, e, met)
}

// constrained is the answer under structured outputs: the answer itself
// when it is a JSON object, else the item's right answer when that is one,
// else an empty object.
func constrained(answer string, it *simkey.Item) string {
	if isJSONObject(answer) {
		return answer
	}
	if it != nil && isJSONObject(it.Right) {
		return it.Right
	}
	return "{}"
}

func isJSONObject(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

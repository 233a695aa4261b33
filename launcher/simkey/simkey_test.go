package simkey

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func hexSHA(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:])
}

func TestFingerprint(t *testing.T) {
	if got := Fingerprint(nil); got != "" {
		t.Errorf("no images: %q, want empty", got)
	}
	a, b := hexSHA("first image"), hexSHA("second image")
	if got, want := Fingerprint([]string{a, b}), hexSHA(a+"\n"+b+"\n"); got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
	if Fingerprint([]string{a, b}) == Fingerprint([]string{b, a}) {
		t.Error("fingerprint ignores image order")
	}
}

func TestKeyMatch(t *testing.T) {
	fp := Fingerprint([]string{hexSHA("img")})
	k := &Key{Items: []Item{
		{ID: "q1", Images: fp, Contains: "Question 1", Right: "1"},
		{ID: "q2", Images: fp, Contains: "Question 2", Right: "2"},
		{ID: "any", Images: fp, Right: "any"},
		{ID: "text", Right: "text"},
	}}
	for _, c := range []struct{ images, text, want string }{
		{fp, "Question 2: ...", "q2"},
		{fp, "Question 1: ...", "q1"},
		{fp, "Question 3", "any"},
		{"", "no images", "text"},
	} {
		if got := k.Match(c.images, c.text); got == nil || got.ID != c.want {
			t.Errorf("Match(%q) = %v, want %s", c.text, got, c.want)
		}
	}
	if got := (&Key{Items: k.Items[:3]}).Match("", "x"); got != nil {
		t.Errorf("text-only request matched image item %s", got.ID)
	}
	var none *Key
	if none.Match("", "x") != nil {
		t.Error("nil key matched")
	}
}

func TestKeyMatchNeedsEveryAlso(t *testing.T) {
	k := &Key{Items: []Item{
		{ID: "judge", Contains: "Rubric: A", Also: []string{"Question 1", "evaluating"}, Right: "j"},
		{ID: "answer", Contains: "Question 1", Right: "a"},
	}}
	for text, want := range map[string]string{
		"evaluating. Question 1. Rubric: A": "judge",
		"Question 1. Rubric: A":             "answer",
		"Question 1":                        "answer",
	} {
		if got := k.Match("", text); got == nil || got.ID != want {
			t.Errorf("Match(%q) = %v, want %s", text, got, want)
		}
	}
}

func TestVerdictResponse(t *testing.T) {
	v := &Verdict{Claim: "x", From: "Response:", To: "Rubric Item:"}
	for text, want := range map[string]string{
		"Case: c Response: says x Rubric Item: x": " says x ",
		"Response: no rubric heading":             " no rubric heading",
		"no response heading Rubric Item: x":      "",
	} {
		if got := v.Response(text); got != want {
			t.Errorf("Response(%q) = %q, want %q", text, got, want)
		}
	}
	if got := (&Verdict{Claim: "x"}).Response("whole text"); got != "whole text" {
		t.Errorf("no headings: %q, want the whole text", got)
	}
}

func TestWriteLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.json")
	k := &Key{Format: Format, Items: []Item{
		{ID: "pathology/P01", Images: Fingerprint([]string{hexSHA("img")}), Contains: "overview", Right: "1", Wrong: []string{"0"}, Constant: "1"},
		{ID: "care/P01/q1", Right: "Answer: B"},
		{ID: "o1/C01/Q1", Contains: "Q1", Also: []string{"consultation"}, Parts: []Part{{ID: "p1", Text: "Say it.", Right: true}, {ID: "m1", Text: "Err."}}},
		{ID: "o1judge/C01/Q1/p1", Contains: "Say it", Verdict: &Verdict{Claim: "Say it.", From: "Response:", To: "Rubric"}},
	}}
	if err := k.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, k) {
		t.Errorf("loaded %+v, wrote %+v", got, k)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"format":  {`{"format":"npcorch-simkey/0","items":[]}`, `format is "npcorch-simkey/0"`},
		"json":    {`{"format":`, "not a valid npcorch-simkey/1 file"},
		"unknown": {`{"format":"npcorch-simkey/1","items":[{"id":"a","rigth":"x"}]}`, `unknown field "rigth"`},
		"fp":      {`{"format":"npcorch-simkey/1","items":[{"id":"a","images":"ABC"}]}`, "item a: images"},
		"id":      {`{"format":"npcorch-simkey/1","items":[{"right":"x"}]}`, "item 0 has no id"},
		"claim":   {`{"format":"npcorch-simkey/1","items":[{"id":"j","verdict":{"from":"R"}}]}`, "item j: a verdict needs the claim"},
	} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", name, err, path, c.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "absent.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent key: %v", err)
	}
}

package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestRequestKeyChangesWithWhatDecidesTheAnswer(t *testing.T) {
	base := func() (string, error) { return requestKey("M", "i", 0, "p", "img", 10, map[string]any{"a": 1}) }
	k0, _ := base()
	k1, _ := base()
	if k0 != k1 {
		t.Fatal("request key is not stable")
	}
	variants := []func() (string, error){
		func() (string, error) { return requestKey("M2", "i", 0, "p", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 1, "p", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p2", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img2", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img", 11, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img", 10, map[string]any{"a": 2}) },
	}
	for i, v := range variants {
		k, _ := v()
		if k == k0 {
			t.Errorf("variant %d has the same key", i)
		}
	}
}

// TestRequestKeyImagesKeepTheirFirstDefinition: the images part of the
// request key is the sha256 of each image's hex sha256 and a newline, and
// of nothing for a request without images, as the keys of earlier runs'
// journals were made, so that a resumed old run sends nothing again.
func TestRequestKeyImagesKeepTheirFirstDefinition(t *testing.T) {
	hexOf := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	a, b := hexOf("image a"), hexOf("image b")
	if got, want := keyImages(nil), hexOf(""); got != want {
		t.Errorf("no images: %s, want %s", got, want)
	}
	if got, want := keyImages([]string{a, b}), hexOf(a+"\n"+b+"\n"); got != want {
		t.Errorf("two images: %s, want %s", got, want)
	}
}

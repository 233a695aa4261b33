package inference

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// inlineFixture writes two images (one larger than a streaming chunk, of
// a length that is not a multiple of 3) and returns them as inline images.
func inlineFixture(t *testing.T) []InlineImage {
	t.Helper()
	dir := t.TempDir()
	var out []InlineImage
	for i, n := range []int{inlineChunk*2 + 7, 5} {
		data := make([]byte, n)
		for k := range data {
			data[k] = byte(k*7 + i)
		}
		path := filepath.Join(dir, "img"+string(rune('a'+i))+".png")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		out = append(out, InlineImage{Path: path, MIME: "image/png", Size: int64(n), SHA256: hex.EncodeToString(sum[:])})
	}
	return out
}

func TestInlineBodyStreamsEachFileAsItsBase64DataURL(t *testing.T) {
	images := inlineFixture(t)
	body := []byte(`{"m":[{"url":"npcorch-inline:1"},{"text":"say \"npcorch-inline:0\""},{"url":"npcorch-inline:0"}]}`)
	segs, err := splitInline(body, images)
	if err != nil {
		t.Fatal(err)
	}
	url := func(im InlineImage) string {
		data, _ := os.ReadFile(im.Path)
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
	}
	want := `{"m":[{"url":"` + url(images[1]) + `"},{"text":"say \"npcorch-inline:0\""},{"url":"` + url(images[0]) + `"}]}`
	var size int64
	for _, sg := range segs {
		size += int64(len(sg.text))
		if sg.image != nil {
			size += sg.image.DataURLLen()
		}
	}
	if size != int64(len(want)) {
		t.Errorf("announced length %d, body has %d", size, len(want))
	}
	for name, r := range map[string]func() io.Reader{
		"large reads":    func() io.Reader { return &inlineBody{segs: segs} },
		"one byte reads": func() io.Reader { return iotest.OneByteReader(&inlineBody{segs: segs}) },
	} {
		got, err := io.ReadAll(r())
		if err != nil || string(got) != want {
			t.Errorf("%s: %d bytes, err %v; want the %d-byte body", name, len(got), err, len(want))
		}
	}
}

func TestInlineBodyFailsOnAChangedImage(t *testing.T) {
	images := inlineFixture(t)
	for _, c := range []struct {
		name   string
		change func(path string)
		want   string
	}{
		{"same size, other bytes", func(p string) { os.WriteFile(p, []byte("12345"), 0o644) }, "does not match the sha256"},
		{"grew", func(p string) { os.WriteFile(p, []byte("123456"), 0o644) }, "grew"},
		{"shrank", func(p string) { os.WriteFile(p, []byte("1234"), 0o644) }, "shrank"},
		{"removed", func(p string) { os.Remove(p) }, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := images[1]
			im.Path = filepath.Join(t.TempDir(), "x.png")
			data, _ := os.ReadFile(images[1].Path)
			os.WriteFile(im.Path, data, 0o644)
			c.change(im.Path)
			segs, err := splitInline([]byte(`{"url":"npcorch-inline:0"}`), []InlineImage{im})
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(&inlineBody{segs: segs})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := splitInline([]byte(`{"url":"npcorch-inline:2"}`), images); err == nil {
		t.Error("a placeholder naming no image must fail")
	}
}

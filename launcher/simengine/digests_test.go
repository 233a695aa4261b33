package simengine

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func pngBytes(fill byte) []byte {
	b := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	for i := 8; i < len(b); i++ {
		b[i] = fill
	}
	return b
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// An image sent again is not read again while its file is unchanged, and a
// file changed or replaced is read again.
func TestLocalImagesAreHashedOncePerVersion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "panel.png")
	first := pngBytes(1)
	if err := os.WriteFile(path, first, 0o644); err != nil {
		t.Fatal(err)
	}
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	e := &engine{o: &options{AllowedMedia: dir}, digests: &digests{}}
	url := "file://" + path
	digest := func() string {
		t.Helper()
		h, err := e.imageDigest(url, 1)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if got := digest(); got != sum(first) {
		t.Fatalf("first digest %s, want the file's sha256 %s", got, sum(first))
	}

	// Same size, same time, same inode: the stored digest answers, so the
	// bytes were not read (they differ now).
	if err := os.WriteFile(path, pngBytes(2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	if got := digest(); got != sum(first) {
		t.Errorf("unchanged stamp: digest %s, want the stored %s", got, sum(first))
	}

	// Rewritten (new time): read again.
	later := stamp.Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := digest(); got != sum(pngBytes(2)) {
		t.Errorf("rewritten file: digest %s, want %s", got, sum(pngBytes(2)))
	}

	// Replaced by another file with the same size and time: a new inode.
	other := filepath.Join(dir, "new.png")
	if err := os.WriteFile(other, pngBytes(3), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if got := digest(); got != sum(pngBytes(3)) {
		t.Errorf("replaced file: digest %s, want %s", got, sum(pngBytes(3)))
	}
}

// A file that is not an image is refused every time it is sent, never
// remembered.
func TestLocalNonImageIsRefusedEachTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("not an image at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &engine{o: &options{AllowedMedia: dir}, digests: &digests{}}
	for i := range 2 {
		if _, err := e.imageDigest("file://"+path, 3); err == nil || !strings.Contains(err.Error(), "cannot identify image file (image 3") {
			t.Errorf("send %d: err %v, want cannot identify image file", i+1, err)
		}
	}
	if len(e.digests.files) != 0 {
		t.Errorf("digests %v, want none stored", e.digests.files)
	}
}

// A path checked once is not resolved again while its file is unchanged,
// and never reads outside --allowed-local-media-path: a link re-pointed
// outside keeps answering with the file it was checked on, and is refused
// once that file changes.
func TestRememberedPathsNeverLeaveTheAllowedDirectory(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	inside := filepath.Join(allowed, "a.png")
	if err := os.WriteFile(inside, pngBytes(1), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "b.png")
	if err := os.WriteFile(secret, pngBytes(9), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(allowed, "link.png")
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	e := &engine{o: &options{AllowedMedia: allowed}, digests: &digests{}}
	url := "file://" + link
	if h, err := e.imageDigest(url, 1); err != nil || h != sum(pngBytes(1)) {
		t.Fatalf("first: %s, %v; want a.png's digest", h, err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if h, err := e.imageDigest(url, 1); err != nil || h != sum(pngBytes(1)) {
		t.Errorf("re-pointed, a.png unchanged: %s, %v; want a.png's digest (the path as checked)", h, err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(inside, later, later); err != nil {
		t.Fatal(err)
	}
	if h, err := e.imageDigest(url, 1); err == nil || !strings.Contains(err.Error(), "must be a subpath of `--allowed-local-media-path`") {
		t.Errorf("re-pointed outside, a.png changed: %s, %v; want refused", h, err)
	}
}

// A local image's digest is the sha256 of all its bytes, whatever its size
// beside the buffer it is read through and the header knownImage reads;
// a file too short for any image header is refused with its size.
func TestLocalDigestIsTheWholeFilesSHA256(t *testing.T) {
	dir := t.TempDir()
	big := pngBytes(7)
	for len(big) < 3<<19+11 { // 1.5 MiB and a tail: several buffers
		big = append(big, byte(len(big)), byte(len(big)>>8))
	}
	webp := []byte("RIFF\x00\x00\x00\x00WEBP")
	for name, data := range map[string][]byte{"gif.gif": []byte("GIF87a"), "webp.webp": webp, "big.png": big} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		e := &engine{o: &options{AllowedMedia: dir}, digests: &digests{}}
		got, err := e.imageDigest("file://"+path, 1)
		if err != nil || got != sum(data) {
			t.Errorf("%s (%d bytes): digest %s, %v; want %s", name, len(data), got, err, sum(data))
		}
	}
	short := filepath.Join(dir, "short.gif")
	if err := os.WriteFile(short, []byte("GIF87"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &engine{o: &options{AllowedMedia: dir}, digests: &digests{}}
	if _, err := e.imageDigest("file://"+short, 2); err == nil || !strings.Contains(err.Error(), "(image 2, 5 bytes)") {
		t.Errorf("5-byte file: err %v, want cannot identify image file (image 2, 5 bytes)", err)
	}
}

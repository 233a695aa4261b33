package simengine

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// requestError is a problem with a request that vLLM answers with 400;
// param names the request field at fault, as vLLM's VLLMValidationError
// does ("" for none).
type requestError struct{ msg, param string }

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, a ...any) error { return &requestError{msg: fmt.Sprintf(format, a...)} }

func badParam(param, format string, a ...any) error {
	return &requestError{msg: fmt.Sprintf(format, a...), param: param}
}

// imageDigest returns the sha256 (hex) of one image_url's bytes: a base64
// data URL, or a file:// URL under --allowed-local-media-path. It checks
// the format signature but never decodes pixels; a local file it has
// hashed before at the same size, time and inode is not read again.
func (e *engine) imageDigest(raw string, n int) (string, error) {
	switch {
	case strings.HasPrefix(raw, "data:"):
		data, err := decodeDataURL(raw, n)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:]), nil
	case strings.HasPrefix(raw, "file:"):
		return e.localDigest(raw, n)
	case strings.HasPrefix(raw, "http://"), strings.HasPrefix(raw, "https://"):
		return "", badRequest("sim-engine cannot fetch %s (image %d): it has no network; send data: or file:// URLs", raw, n)
	default:
		return "", badRequest("The URL must be either a HTTP, data or file URL (image %d).", n)
	}
}

// decodeDataURL returns the image bytes of a base64 data URL.
func decodeDataURL(raw string, n int) ([]byte, error) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(raw, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return nil, badRequest("Only base64 data URLs are supported for now (image %d).", n)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, badRequest("Failed to decode the base64 data URL of image %d: %v", n, err)
	}
	if !knownImage(data) {
		return nil, unknownImage(n, len(data))
	}
	return data, nil
}

func unknownImage(n, size int) error {
	return badRequest("cannot identify image file (image %d, %d bytes): not PNG, JPEG, GIF or WebP", n, size)
}

// localDigest hashes a file:// URL's file, or returns the digest it
// stored for the file as it is now. A path checked before is not resolved
// again while its file is there and unchanged: one stat answers.
func (e *engine) localDigest(raw string, n int) (string, error) {
	path, err := e.localPath(raw)
	if err != nil {
		return "", err
	}
	if resolved, ok := e.digests.resolved(path); ok {
		if h, ok := e.digests.current(resolved); ok {
			return h, nil
		}
	}
	resolved, err := e.resolveLocal(path)
	if err != nil {
		return "", err
	}
	h, err, shared := e.digests.reads.Do(resolved, func() (any, error) {
		if h, ok := e.digests.current(resolved); ok {
			return h, nil
		}
		return e.hashFile(path, resolved, n)
	})
	if err != nil && shared {
		return e.hashFile(path, resolved, n) // the error names this request's image
	}
	if err != nil {
		return "", err
	}
	e.digests.remember(path, resolved)
	return h.(string), nil
}

// hashFile reads, checks and hashes the file at resolved (path as the
// request gave it) and stores its digest. It streams the file through the
// hash: a panel of several megabytes costs one small buffer, not a copy of
// the file for the collector to clear and scan.
func (e *engine) hashFile(path, resolved string, n int) (string, error) {
	f, err := os.Open(resolved)
	if errors.Is(err, fs.ErrNotExist) {
		return "", badRequest("[Errno 2] No such file or directory: '%s'", path)
	}
	if err != nil {
		return "", badRequest("cannot read image %s: %v", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", badRequest("cannot read image %s: %v", path, err)
	}
	var head [imageMagicLen]byte
	k, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", badRequest("cannot read image %s: %v", path, err)
	}
	if !knownImage(head[:k]) {
		return "", unknownImage(n, int(fi.Size()))
	}
	sum, err := e.digests.sum(head[:k], f)
	if err != nil {
		return "", badRequest("cannot read image %s: %v", path, err)
	}
	return e.digests.store(resolved, stampOf(fi), sum), nil
}

// localPath checks a file:// URL and returns its path, cleaned: only when
// --allowed-local-media-path is set, as vLLM's MediaConnector.
func (e *engine) localPath(raw string) (string, error) {
	if e.o.AllowedMedia == "" {
		return "", badRequest("Cannot load local files without `--allowed-local-media-path`.")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Host != "" && u.Host != "localhost") {
		return "", badRequest("Invalid file URL %q: want file:///absolute/path", raw)
	}
	return filepath.Clean(u.Path), nil
}

// resolveLocal resolves path's symbolic links and checks, as vLLM's
// MediaConnector does, that the file lies under
// --allowed-local-media-path.
func (e *engine) resolveLocal(path string) (string, error) {
	allowed := e.allowedRoot
	if allowed == "" {
		allowed = resolveDir(e.o.AllowedMedia)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		resolved = path
	}
	rel, err := filepath.Rel(allowed, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", badRequest("The file path %s must be a subpath of `--allowed-local-media-path` %s.", path, e.o.AllowedMedia)
	}
	return resolved, nil
}

// resolveDir returns dir with its symbolic links resolved, or cleaned
// when it cannot be resolved.
func resolveDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// knownImage checks the signature of the formats vLLM's image loader
// (PIL) is commonly given.
// imageMagicLen is how many leading bytes knownImage needs at most.
const imageMagicLen = 12

func knownImage(b []byte) bool {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
	case len(b) >= 12 && bytes.HasPrefix(b, []byte("RIFF")) && string(b[8:12]) == "WEBP":
	default:
		return false
	}
	return true
}

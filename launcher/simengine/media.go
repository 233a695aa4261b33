package simengine

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
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

// loadImage returns the bytes of one image_url: a base64 data URL, or a
// file:// URL under --allowed-local-media-path. It reads the bytes and
// checks the format signature but never decodes pixels.
func (e *engine) loadImage(raw string, n int) ([]byte, error) {
	var data []byte
	switch {
	case strings.HasPrefix(raw, "data:"):
		meta, payload, ok := strings.Cut(strings.TrimPrefix(raw, "data:"), ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, badRequest("Only base64 data URLs are supported for now (image %d).", n)
		}
		b, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, badRequest("Failed to decode the base64 data URL of image %d: %v", n, err)
		}
		data = b
	case strings.HasPrefix(raw, "file:"):
		b, err := e.readLocal(raw)
		if err != nil {
			return nil, err
		}
		data = b
	case strings.HasPrefix(raw, "http://"), strings.HasPrefix(raw, "https://"):
		return nil, badRequest("sim-engine cannot fetch %s (image %d): it has no network; send data: or file:// URLs", raw, n)
	default:
		return nil, badRequest("The URL must be either a HTTP, data or file URL (image %d).", n)
	}
	if !knownImage(data) {
		return nil, badRequest("cannot identify image file (image %d, %d bytes): not PNG, JPEG, GIF or WebP", n, len(data))
	}
	return data, nil
}

// readLocal reads a file:// URL the way vLLM's MediaConnector does: only
// when --allowed-local-media-path is set and the resolved file lies under it.
func (e *engine) readLocal(raw string) ([]byte, error) {
	if e.o.AllowedMedia == "" {
		return nil, badRequest("Cannot load local files without `--allowed-local-media-path`.")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Host != "" && u.Host != "localhost") {
		return nil, badRequest("Invalid file URL %q: want file:///absolute/path", raw)
	}
	path := filepath.Clean(u.Path)
	allowed, err := filepath.EvalSymlinks(e.o.AllowedMedia)
	if err != nil {
		allowed = filepath.Clean(e.o.AllowedMedia)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		resolved = path
	}
	rel, err := filepath.Rel(allowed, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, badRequest("The file path %s must be a subpath of `--allowed-local-media-path` %s.", path, e.o.AllowedMedia)
	}
	data, err := os.ReadFile(resolved)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, badRequest("[Errno 2] No such file or directory: '%s'", path)
	}
	if err != nil {
		return nil, badRequest("cannot read image %s: %v", path, err)
	}
	return data, nil
}

// knownImage checks the signature of the formats vLLM's image loader
// (PIL) is commonly given.
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

package inference

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// InlinePlaceholder starts the image URLs that Client.Send replaces with
// the base64 data URL of a file.
const InlinePlaceholder = "npcorch-inline:"

// InlineImage is an image file streamed as a base64 data URL in place of
// its placeholder.
type InlineImage struct {
	Path   string
	MIME   string
	Size   int64
	SHA256 string // hex; "" when the manifest has none
}

// DataURLLen is the length of the data URL of an inline image.
func (im InlineImage) DataURLLen() int64 {
	return int64(len("data:"+im.MIME+";base64,")) + int64(base64.StdEncoding.EncodedLen(int(im.Size)))
}

// bodyWriter is the HTTP client go-openai sends through. It rewrites the
// chat completion body go-openai marshalled: it sends temperature 0 and
// top_p 1 explicitly (go-openai drops a zero temperature, and an engine
// would then apply its defaults; npcorch always wants greedy decoding, and
// the engines are started with neutral defaults, docs/conformance.md), and
// it streams each inline image's file as a base64 data URL
// in place of its placeholder, so the images are never held in memory.
type bodyWriter struct {
	next   *http.Client
	inline []InlineImage
	// sampling is the keys written first into the body's object
	// (greedyKeys), "" for none.
	sampling string
	body     *inlineBody // the last body sent, for failure
	size     int64       // its length
	// abort ends the exchange (cancels its context): the end of a
	// drainingBody's wait.
	abort func()
}

// greedyKeys returns the sampling keys body leaves out, with their greedy
// values: `"temperature":0,` when it sets no temperature (go-openai omits
// a zero), `"top_p":1,` when it sets no top-p. A request that sets its own
// keeps them, and the body never holds a key twice.
func greedyKeys(body openai.ChatCompletionRequest) string {
	var keys string
	if body.Temperature == 0 {
		keys += `"temperature":0,`
	}
	if body.TopP == 0 {
		keys += `"top_p":1,`
	}
	return keys
}

func (w *bodyWriter) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return w.next.Do(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > 0 && body[0] == '{' && w.sampling != "" {
		patched := make([]byte, 0, len(body)+len(w.sampling))
		patched = append(patched, '{')
		patched = append(patched, w.sampling...)
		patched = append(patched, body[1:]...)
		body = patched
	}
	segs, err := splitInline(body, w.inline)
	if err != nil {
		return nil, &AttemptFailure{Kind: FailRejected, Err: err}
	}
	var size int64
	for _, sg := range segs {
		size += int64(len(sg.text))
		if sg.image != nil {
			size += sg.image.DataURLLen()
		}
	}
	w.size = size
	w.body = &inlineBody{segs: segs}
	req.Body = w.body
	req.ContentLength = size
	req.GetBody = func() (io.ReadCloser, error) {
		w.body = &inlineBody{segs: segs}
		return w.body, nil
	}
	resp, err := w.next.Do(req)
	if err == nil && w.abort != nil {
		resp.Body = &drainingBody{ReadCloser: resp.Body, abort: w.abort}
	}
	return resp, err
}

// Bounds of drainingBody's read to the end of a body: what an engine sends
// after an answer's [DONE] is the chunked body's last chunk, five bytes,
// at once.
const (
	drainBytes = 4 << 10
	drainWait  = 100 * time.Millisecond
)

// drainingBody lets a response's connection carry the next request.
// net/http keeps a connection only once its response body was read to the
// end, and a stream's reader stops at [DONE], just before the chunked
// body's last chunk, which the engine writes after it: each answer whose
// last chunk came in a packet of its own cost a new connection (891
// connections for 5,168 requests at 1×256 in scripts/bench/enginefull.sh).
// Close reads on to the end first, for at most drainBytes and drainWait;
// past them the connection is closed, as before.
type drainingBody struct {
	io.ReadCloser
	abort func()
	eof   bool
}

func (b *drainingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.eof = b.eof || errors.Is(err, io.EOF)
	return n, err
}

func (b *drainingBody) Close() error {
	if !b.eof {
		t := time.AfterFunc(drainWait, b.abort)
		_, _ = io.CopyN(io.Discard, b.ReadCloser, drainBytes)
		t.Stop()
	}
	return b.ReadCloser.Close()
}

// failure is the reason the last body could not be sent whole (an image
// that changed since it was prepared), or nil.
func (w *bodyWriter) failure() *AttemptFailure {
	if w.body == nil || w.body.err == nil {
		return nil
	}
	return &AttemptFailure{Kind: FailRejected, Err: w.body.err}
}

// segment is a piece of a request body: JSON text, then optionally an
// inline image.
type segment struct {
	text  []byte
	image *InlineImage
}

// splitInline cuts a marshalled body at the inline placeholders.
func splitInline(body []byte, inline []InlineImage) ([]segment, error) {
	if len(inline) == 0 {
		return []segment{{text: body}}, nil
	}
	marker := []byte(`:"` + InlinePlaceholder)
	var segs []segment
	for len(body) > 0 {
		i := bytes.Index(body, marker)
		if i < 0 {
			segs = append(segs, segment{text: body})
			break
		}
		start := i + len(marker)
		end := bytes.IndexByte(body[start:], '"')
		if end < 0 {
			return nil, errors.New("malformed inline image placeholder in the request body")
		}
		n, err := strconv.Atoi(string(body[start : start+end]))
		if err != nil || n < 0 || n >= len(inline) {
			return nil, fmt.Errorf("inline image placeholder %q names no image of the request", body[start:start+end])
		}
		segs = append(segs, segment{text: body[:i+2], image: &inline[n]})
		body = body[start+end:]
	}
	return segs, nil
}

// inlineChunk is how much of an image file is read at once: a multiple of
// 3, so every chunk encodes to whole base64 quanta.
const inlineChunk = 48 << 10

// inlineBody reads a request body: JSON text and, in between, image files
// encoded to base64 as they are read, their size and sha256 checked
// against the manifest on the way. A file that differs fails the read, so
// the engine never receives a whole request with a changed image.
type inlineBody struct {
	segs []segment
	seg  int
	// The image being streamed.
	text    bool // the segment's text has been read
	textPos int
	f       *os.File
	hash    hash.Hash
	read    int64
	in      []byte
	out     []byte
	outPos  int
	err     error
}

func (b *inlineBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n := 0
	for n < len(p) && b.seg < len(b.segs) {
		sg := &b.segs[b.seg]
		if !b.text {
			k := copy(p[n:], sg.text[b.textPos:])
			n += k
			b.textPos += k
			if b.textPos < len(sg.text) {
				return n, nil
			}
			b.text = true
			if sg.image != nil {
				if err := b.open(sg.image); err != nil {
					b.err = err
					return n, err
				}
			}
			continue
		}
		if sg.image == nil {
			b.next()
			continue
		}
		if b.outPos == len(b.out) {
			done, err := b.fill(sg.image)
			if err != nil {
				b.err = err
				return n, err
			}
			if done {
				b.next()
				continue
			}
		}
		k := copy(p[n:], b.out[b.outPos:])
		n += k
		b.outPos += k
	}
	if n == 0 && b.seg >= len(b.segs) {
		return 0, io.EOF
	}
	return n, nil
}

func (b *inlineBody) next() {
	b.seg++
	b.text, b.textPos = false, 0
}

func (b *inlineBody) open(im *InlineImage) error {
	f, err := os.Open(im.Path)
	if err != nil {
		return fmt.Errorf("image %s: %w; run `npcorch prep` again", im.Path, err)
	}
	b.f, b.read = f, 0
	b.hash = sha256.New()
	if b.in == nil {
		b.in = make([]byte, inlineChunk)
		b.out = make([]byte, 0, base64.StdEncoding.EncodedLen(inlineChunk)+len("data:image/webp;base64,"))
	}
	b.out = append(b.out[:0], "data:"+im.MIME+";base64,"...)
	b.outPos = 0
	return nil
}

// fill encodes the next chunk of the image into out; done means the file
// is finished and checked.
func (b *inlineBody) fill(im *InlineImage) (done bool, err error) {
	if b.f == nil {
		return true, nil
	}
	k, rerr := io.ReadFull(b.f, b.in)
	if k > 0 {
		b.read += int64(k)
		if b.read > im.Size {
			return false, b.changed(im, "grew")
		}
		b.hash.Write(b.in[:k])
		b.out = b.out[:base64.StdEncoding.EncodedLen(k)]
		base64.StdEncoding.Encode(b.out, b.in[:k])
		b.outPos = 0
	}
	switch {
	case rerr == nil:
		return false, nil
	case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
	default:
		return false, fmt.Errorf("image %s: %w", im.Path, rerr)
	}
	b.f.Close()
	b.f = nil
	if b.read != im.Size {
		return false, b.changed(im, "shrank")
	}
	if im.SHA256 != "" && hex.EncodeToString(b.hash.Sum(nil)) != im.SHA256 {
		return false, b.changed(im, "does not match the sha256 in the manifest")
	}
	return k == 0, nil
}

func (b *inlineBody) changed(im *InlineImage, how string) error {
	return fmt.Errorf("image %s %s: it changed after `npcorch prep`, run prep again", im.Path, how)
}

func (b *inlineBody) Close() error {
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	return nil
}

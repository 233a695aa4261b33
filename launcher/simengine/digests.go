package simengine

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"
)

// maxDigests bounds the digest cache: past it, new files are hashed every
// time they are sent (still correct, only slower).
const maxDigests = 1 << 17

// fileStamp identifies one version of a file: a file rewritten in place
// changes its size or modification time, and a replaced one its inode.
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// digests remembers the sha256 of the local image files the engine has
// read, by resolved path and stamp, so that an image sent in many requests
// (a campaign sends each panel to several tasks, and --repeat sends every
// item again) is read and hashed once. vLLM keeps a processor cache keyed
// by content for the same reason; the simulated engine, which shares the
// machine's cores with the client it serves, would otherwise spend most of
// its CPU hashing the same bytes. Requests that arrive together with the
// same file share one read. It also remembers where each path checked
// under --allowed-local-media-path resolved to, so that a request of 80
// images does not walk 80 paths' symbolic links again. Safe for
// concurrent use.
type digests struct {
	reads singleflight.Group // by resolved path
	bufs  sync.Pool          // *[]byte that sum reads files through
	mu    sync.Mutex
	files map[string]digestEntry
	paths map[string]string // path as sent → resolved and checked
}

type digestEntry struct {
	stamp fileStamp
	hex   string
}

// lookup returns the digest stored for path at this stamp.
func (d *digests) lookup(path string, st fileStamp) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.files[path]
	if !ok || e.stamp != st {
		return "", false
	}
	return e.hex, true
}

// current returns the digest stored for the file at path as it is now
// (one stat).
func (d *digests) current(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	return d.lookup(path, stampOf(fi))
}

// sum returns the hex sha256 of head followed by the rest of r, read
// through a pooled buffer: hashing a panel of several megabytes costs no
// copy of it for the collector to clear and scan.
func (d *digests) sum(head []byte, r io.Reader) (string, error) {
	h := sha256.New()
	h.Write(head)
	buf, ok := d.bufs.Get().(*[]byte)
	if !ok {
		b := make([]byte, 256<<10)
		buf = &b
	}
	defer d.bufs.Put(buf)
	if _, err := io.CopyBuffer(h, r, *buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// store remembers h, the digest of the file read from path at this stamp,
// and returns it.
func (d *digests) store(path string, st fileStamp, h string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.files == nil {
		d.files = make(map[string]digestEntry)
	}
	if _, ok := d.files[path]; ok || len(d.files) < maxDigests {
		d.files[path] = digestEntry{stamp: st, hex: h}
	}
	return h
}

// resolved returns where path resolved to when it was last checked.
func (d *digests) resolved(path string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.paths[path]
	return r, ok
}

// remember notes that path resolved to resolved and passed the check.
func (d *digests) remember(path, resolved string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paths == nil {
		d.paths = make(map[string]string)
	}
	if _, ok := d.paths[path]; ok || len(d.paths) < maxDigests {
		d.paths[path] = resolved
	}
}

// stampOf reads a file's stamp.
func stampOf(fi os.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi)}
}

// inode returns the file's inode number, or 0 where the system gives none.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

package prep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// WriteFile writes data to Out/name (slash-separated, inside Out) through
// a temporary file and a rename, and leaves the file as it is when it
// already holds data: a caller's index of the outputs (a manifest) is
// written this way once the run is done.
func (e *Executor) WriteFile(name string, data []byte) error {
	if !fs.ValidPath(name) || name == "." {
		return fmt.Errorf("%q is not a path inside the output folder", name)
	}
	file := filepath.Join(e.opt.Out, filepath.FromSlash(name))
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return writeAtomic(file, data)
}

func (e *Executor) recordPath(key string) string {
	return filepath.Join(e.opt.Out, cacheDir, key[:2], key+".json")
}

// cached returns the recorded image when the record exists and the file
// under Out still has the recorded size and sha256.
func (e *Executor) cached(output, key string) (Image, bool) {
	data, err := os.ReadFile(e.recordPath(key))
	if err != nil {
		return Image{}, false
	}
	var rec cacheRecord
	if json.Unmarshal(data, &rec) != nil || rec.Key != key || rec.Image.Path != output {
		return Image{}, false
	}
	out, err := os.ReadFile(filepath.Join(e.opt.Out, filepath.FromSlash(output)))
	if err != nil || int64(len(out)) != rec.Image.Bytes {
		return Image{}, false
	}
	sum := sha256.Sum256(out)
	if hex.EncodeToString(sum[:]) != rec.Image.SHA256 {
		return Image{}, false
	}
	return rec.Image, true
}

// key hashes the version, parameters, output path, the drawing's
// description and the bytes of every input file.
func (e *Executor) key(j *Job) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", Version, e.paramsJSON, j.Output, j.Draw.describe(e.params))
	for _, in := range j.Draw.inputs() {
		sum, err := e.fileHash(in)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", in, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (e *Executor) fileHash(name string) (string, error) {
	e.mu.Lock()
	sum, ok := e.hashes[name]
	e.mu.Unlock()
	if ok {
		return sum, nil
	}
	f, err := e.fsys.Open(name)
	if err != nil {
		return "", fmt.Errorf("input %s: %w", name, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("input %s: %w", name, err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	e.mu.Lock()
	e.hashes[name] = sum
	e.mu.Unlock()
	return sum, nil
}

// writeAtomic writes data to name through a temporary file and a rename,
// so an interrupted run never leaves a half-written file under name. The
// file is created as any file is: mode 0666 less the umask.
func writeAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(name))
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// createTemp creates a new file .tmp-RANDOM in dir with mode 0666 less
// the umask (os.CreateTemp would make it 0600 whatever the umask).
func createTemp(dir string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".tmp-%016x", rand.Uint64()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("create a temporary file in %s: 100 names taken", dir)
}

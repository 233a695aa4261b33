package importer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/renameio/v2"
)

// MirrorDir is the folder of the dataset where files of a DICOM tree
// outside it are linked (or copied).
const MirrorDir = "dicom"

// placement decides how dataset.json reaches the files of the DICOM
// tree: in place when the tree lies inside the dataset folder, else
// through OUT/dicom, which mirrors the chosen series' files.
type placement struct {
	tree, out string // absolute, symbolic links resolved
	// prefix is the tree's path inside the dataset folder ("" when
	// mirrored).
	prefix string
	mirror bool
}

func newPlacement(tree, out string) (*placement, error) {
	p := &placement{}
	var err error
	if p.tree, err = realPath(tree); err != nil {
		return nil, fmt.Errorf("DICOM folder: %w", err)
	}
	if p.out, err = realPath(out); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	rel, err := filepath.Rel(p.out, p.tree)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		p.mirror = true
		return p, nil
	}
	p.prefix = filepath.ToSlash(rel)
	return p, nil
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// excluded returns the dataset folder's path inside the tree when it lies
// there (the scan must not read the import's own files), or "".
func (p *placement) excluded() string {
	rel, err := filepath.Rel(p.tree, p.out)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// path returns the dataset-relative path of a file of the tree.
func (p *placement) path(file string) string {
	if p.mirror {
		return path.Join(MirrorDir, file)
	}
	return path.Join(p.prefix, file)
}

// describe says where the dataset finds the files.
func (p *placement) describe() string {
	if !p.mirror {
		return fmt.Sprintf("DICOM files referenced in place under %s/", p.prefix)
	}
	return fmt.Sprintf("DICOM files of the chosen series linked (or copied, across file systems) into %s/: the tree lies outside the dataset folder", MirrorDir)
}

// materialise makes OUT/dicom hold exactly files (tree paths): each a
// hard link to the tree's file, or a copy where linking fails (another
// file system); files already there and the same are kept, others
// removed. It does nothing when the files are referenced in place.
func (p *placement) materialise(files []string) (linked, copied int, err error) {
	if !p.mirror {
		return 0, 0, nil
	}
	root := filepath.Join(p.out, MirrorDir)
	if st, err := os.Lstat(root); err == nil && !st.IsDir() {
		return 0, 0, fmt.Errorf("%s is not a folder (a symbolic link?): import keeps the linked DICOM files there; move it away", root)
	}
	want := make(map[string]bool, len(files))
	for _, f := range files {
		want[filepath.FromSlash(f)] = true
		src, dst := filepath.Join(p.tree, filepath.FromSlash(f)), filepath.Join(root, filepath.FromSlash(f))
		how, err := mirrorFile(src, dst)
		if err != nil {
			return linked, copied, fmt.Errorf("place %s in %s: %w", f, root, err)
		}
		switch how {
		case "link":
			linked++
		case "copy":
			copied++
		}
	}
	return linked, copied, removeStale(root, want)
}

// mirrorFile makes dst the same file as src: "link" or "copy" when it
// made it, "" when it was already there.
func mirrorFile(src, dst string) (string, error) {
	si, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if di, err := os.Stat(dst); err == nil {
		if os.SameFile(si, di) || di.Size() == si.Size() && di.ModTime().Equal(si.ModTime()) {
			return "", nil
		}
		if err := os.Remove(dst); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if os.Link(src, dst) == nil {
		return "link", nil
	}
	if err := copyFile(src, dst, si); err != nil {
		return "", err
	}
	return "copy", nil
}

func copyFile(src, dst string, si fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := renameio.NewPendingFile(dst, renameio.WithPermissions(0o666))
	if err != nil {
		return err
	}
	defer out.Cleanup()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	if err := os.Chtimes(out.Name(), si.ModTime(), si.ModTime()); err != nil {
		return err
	}
	return out.CloseAtomicallyReplace()
}

// removeStale removes the files under root that are not wanted, and the
// folders left empty.
func removeStale(root string, want map[string]bool) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case !want[rel]:
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tidy %s: %w", root, err)
	}
	slices.Reverse(dirs)
	for _, d := range dirs {
		if d != root {
			os.Remove(d) // fails, as it should, when not empty
		}
	}
	return nil
}

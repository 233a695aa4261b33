package mrseries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// sopClassDICOMDIR is the media storage SOP class of a DICOMDIR.
const sopClassDICOMDIR = "1.2.840.10008.1.3.10"

// maxFileBytes bounds what is read of any one file (a deflated data set
// or a DICOMDIR is read whole).
const maxFileBytes = 2 << 30

// Options configures Scan.
type Options struct {
	// Workers bounds concurrent header reads; 0 means all cores.
	Workers int
	// Exclude names folders (relative to the root) not to walk, such as
	// an import's own output inside the tree.
	Exclude []string
}

// Tree is what Scan found.
type Tree struct {
	// Series are sorted by patient, study date and UID, series number and
	// UID.
	Series []*Series
	// Files counts the DICOM files whose headers were read (DICOMDIRs
	// not included).
	Files int
	// Skipped are the files not read as slices, with why, by path.
	Skipped []Skipped
	// Unreadable are files that look like DICOM and could not be read.
	Unreadable []Skipped
	// DICOMDIRs are the DICOMDIRs honoured, by path.
	DICOMDIRs []string
	// Missing are files a DICOMDIR references that the tree lacks.
	Missing []Skipped
	// Unlisted are DICOM files under a DICOMDIR's folder that it does not
	// reference (read all the same).
	Unlisted []string
}

// Skipped is a file and why it was skipped (or could not be read).
type Skipped struct {
	Path, Reason string
}

// Reasons for skipping a file.
const (
	ReasonNotDICOM = "not DICOM"
	ReasonHidden   = "hidden"
	ReasonLink     = "a symbolic link or special file (not followed)"
	ReasonDICOMDIR = "a DICOMDIR (read as the index of its folder)"
	ReasonExcluded = "in an excluded folder"
)

// Series is the files of one SeriesInstanceUID of one patient and study.
type Series struct {
	PatientID, PatientName         string
	StudyUID, StudyDate, StudyDesc string
	UID                            string
	Number                         int
	Modality, Description          string
	// Files are the paths of the series' files relative to the root,
	// sorted.
	Files []string
	// Acquisition is the first file's, with MixedOrientations set when
	// the files disagree.
	Acquisition Acquisition
	// Problems say why prep could not read the series as it is (files
	// without geometry, several frames of reference); nil when it can.
	Problems []string
	// Class is Classify(Acquisition).
	Class Class
	// Rows and Cols are the first file's size.
	Rows, Cols int
	// FrameOfReference is the first file's.
	FrameOfReference string
	// Syntaxes are the transfer syntaxes of its files, sorted.
	Syntaxes []string
}

// Scan reads the tree under the root of fsys; see the package comment.
// Errors are returned only for a tree that cannot be walked or a
// cancelled context: files that cannot be read are listed in the Tree.
func Scan(ctx context.Context, fsys fs.FS, opt Options) (*Tree, error) {
	t := &Tree{}
	files, err := t.walk(fsys, opt.Exclude)
	if err != nil {
		return nil, err
	}
	files, indexes := t.honourDICOMDIRs(fsys, files)
	headers, err := readHeaders(ctx, fsys, files, opt.Workers)
	if err != nil {
		return nil, err
	}
	var found []foundFile
	for i, r := range headers {
		switch {
		case errors.Is(r.err, dicomfile.ErrNotDICOM):
			t.Skipped = append(t.Skipped, Skipped{files[i], ReasonNotDICOM})
		case r.err != nil:
			t.Unreadable = append(t.Unreadable, Skipped{files[i], r.err.Error()})
		case r.dicomdir:
			t.Skipped = append(t.Skipped, Skipped{files[i], ReasonDICOMDIR})
		default:
			found = append(found, foundFile{files[i], r.h})
			if unlisted(indexes, files[i]) {
				t.Unlisted = append(t.Unlisted, files[i])
			}
		}
	}
	t.Files = len(found)
	t.Series = group(found)
	slices.SortFunc(t.Skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	return t, nil
}

// foundFile is a DICOM file read and its header.
type foundFile struct {
	path string
	h    Header
}

// index is the folder of a DICOMDIR and the files it references.
type index struct {
	dir    string
	listed map[string]bool
}

// unlisted reports whether file lies under the folder of a DICOMDIR that
// does not reference it.
func unlisted(indexes []index, file string) bool {
	for _, ix := range indexes {
		if (ix.dir == "." || strings.HasPrefix(file, ix.dir+"/")) && !ix.listed[file] {
			return true
		}
	}
	return false
}

// walk lists the regular files under the root, skipping hidden and
// excluded folders; what it leaves is recorded in t.Skipped.
func (t *Tree) walk(fsys fs.FS, exclude []string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", p, err)
		}
		if p == "." {
			return nil
		}
		hidden := strings.HasPrefix(d.Name(), ".")
		switch {
		case d.IsDir() && slices.Contains(exclude, p):
			t.Skipped = append(t.Skipped, Skipped{p + "/", ReasonExcluded})
			return fs.SkipDir
		case d.IsDir() && hidden:
			t.Skipped = append(t.Skipped, Skipped{p + "/", ReasonHidden})
			return fs.SkipDir
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			t.Skipped = append(t.Skipped, Skipped{p, ReasonLink})
		case hidden:
			t.Skipped = append(t.Skipped, Skipped{p, ReasonHidden})
		default:
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// honourDICOMDIRs reads every file named DICOMDIR (any case) that is one,
// checks that the files it references exist (Missing, matched without
// regard to case as CD file systems show them), and names the DICOM
// files under its folder it does not reference (Unlisted, after the
// headers are read). It returns the files to read, DICOMDIRs removed, and
// the DICOMDIRs' indexes.
func (t *Tree) honourDICOMDIRs(fsys fs.FS, files []string) ([]string, []index) {
	byFold := make(map[string]string, len(files))
	for _, f := range files {
		byFold[strings.ToLower(f)] = f
	}
	var rest []string
	var indexes []index
	for _, f := range files {
		if !strings.EqualFold(path.Base(f), "DICOMDIR") {
			rest = append(rest, f)
			continue
		}
		refs, outside, err := readDICOMDIR(fsys, f)
		switch {
		case errors.Is(err, errNotDICOMDIR) || errors.Is(err, dicomfile.ErrNotDICOM):
			rest = append(rest, f) // read as any other file
			continue
		case err != nil:
			t.Unreadable = append(t.Unreadable, Skipped{f, err.Error()})
			continue
		}
		t.DICOMDIRs = append(t.DICOMDIRs, f)
		t.Skipped = append(t.Skipped, Skipped{f, ReasonDICOMDIR})
		dir := path.Dir(f)
		listed := map[string]bool{}
		for _, ref := range refs {
			p := path.Join(dir, ref)
			if actual, ok := byFold[strings.ToLower(p)]; ok {
				listed[actual] = true
				continue
			}
			t.Missing = append(t.Missing, Skipped{p, "referenced by " + f + ", not in the tree"})
		}
		for _, ref := range outside {
			t.Missing = append(t.Missing, Skipped{ref, "referenced by " + f + ", outside its folder"})
		}
		indexes = append(indexes, index{dir, listed})
	}
	return rest, indexes
}

// errNotDICOMDIR is readDICOMDIR's error for a DICOM file of another
// class.
var errNotDICOMDIR = errors.New("not a DICOMDIR")

// readDICOMDIR returns the files a DICOMDIR references, as slash paths
// relative to its folder, and those that would leave it as written; an
// error when it is not a DICOMDIR.
func readDICOMDIR(fsys fs.FS, name string) (refs, outside []string, err error) {
	fh, err := fsys.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	f, err := dicomfile.ScanHeader(io.LimitReader(fh, maxFileBytes))
	if errors.Is(err, dicomfile.ErrNotDICOM) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("corrupt or truncated DICOMDIR: %w", err)
	}
	if f.String(dicomfile.MediaStorageSOPClassUID) != sopClassDICOMDIR {
		return nil, nil, errNotDICOMDIR
	}
	records, err := f.Items(dicomfile.DirectoryRecordSequence)
	if err != nil {
		return nil, nil, fmt.Errorf("corrupt DICOMDIR: %w", err)
	}
	for _, r := range records {
		parts := r.Strings(dicomfile.ReferencedFileID)
		if len(parts) == 0 {
			continue
		}
		ref := path.Clean(strings.Join(parts, "/"))
		if fs.ValidPath(ref) {
			refs = append(refs, ref)
		} else {
			outside = append(outside, strings.Join(parts, "\\"))
		}
	}
	return refs, outside, nil
}

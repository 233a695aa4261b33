//go:build !openslide

package imaging

// OpenSlideAvailable reports whether this build reads whole-slide images
// through OpenSlide (build tag openslide).
const OpenSlideAvailable = false

// OpenWholeSlide reports ok = false for every file in a build without
// OpenSlide; ReadSlide then reads the file as a plain image and, when it is
// a pyramidal whole-slide format, returns ErrNoOpenSlide.
func OpenWholeSlide(path string) (s Slide, ok bool, err error) { return nil, false, nil }

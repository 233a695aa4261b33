package dataset

// PreparedFormat is the format tag of a prepared manifest.
const PreparedFormat = "npcorch-prepared/1"

// Prepared is the manifest `npcorch prep` writes (PREP/manifest.json): every
// image it produced with its sha256, grouped per patient in the order the
// requests use them. Paths are relative to the folder holding the manifest.
type Prepared struct {
	Format string `json:"format"`
	// Dataset is the raw dataset's name and the sha256 of its dataset.json.
	Dataset       string `json:"dataset"`
	DatasetSHA256 string `json:"dataset_sha256"`
	// Params is the sha256 of the preparation parameters (tile size, page
	// count, overview size...), part of every cache key.
	ParamsSHA256 string            `json:"params_sha256"`
	Patients     []PreparedPatient `json:"patients"`
}

// PreparedPatient lists one patient's prepared images.
type PreparedPatient struct {
	ID string `json:"id"`
	// Overview is the pathology overview (L3 A5 and L6 A11).
	Overview *Image `json:"overview,omitempty"`
	// Panels holds one 3×3 sequence panel per series (A6), in series order.
	Panels []Panel `json:"panels,omitempty"`
	// Cards holds the 4×3 structure cards (A7, A8) in finding order.
	Cards []Card `json:"cards,omitempty"`
	// TGroups and NGroups are the ordered plane groups of the T range (A9)
	// and the N range (A10): axial groups top to bottom, then coronal groups.
	TGroups []PlaneGroup `json:"t_groups,omitempty"`
	NGroups []PlaneGroup `json:"n_groups,omitempty"`
	// Pages are the ten CarePath MRI pages (A12).
	Pages []Image `json:"pages,omitempty"`
	// Failed lists the images prep could not make, by path; the lists
	// above hold only images that were made.
	Failed []ImageFailure `json:"failed,omitempty"`
}

// Kinds of prepared image, as ImageFailure names them.
const (
	KindPatient  = "patient" // the whole patient (an id that cannot name a folder)
	KindOverview = "overview"
	KindPanel    = "panel"
	KindCard     = "card"
	KindTGroups  = "t_groups"
	KindNGroups  = "n_groups"
	KindPage     = "page"
)

// ImageFailure is an image prep could not make: the items that show it cannot
// be sent, and `npcorch run` names them before it starts.
type ImageFailure struct {
	// Path is the image's path, or, for a plan that failed as a whole, the
	// images it stood for (e.g. "P01/t_groups (axial)").
	Path string `json:"path"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Sequence names a panel's series; Structure and Side a card's finding.
	Sequence  string `json:"sequence,omitempty"`
	Structure string `json:"structure,omitempty"`
	Side      string `json:"side,omitempty"`
	// Reason is prep's error.
	Reason string `json:"reason"`
}

// Image is one prepared PNG.
type Image struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// Panel is a sequence-recognition panel and the sequence it shows (the
// answer; the image itself carries no text).
type Panel struct {
	Image
	Sequence string `json:"sequence"`
}

// Card is a structure card and the finding it shows.
type Card struct {
	Image
	Structure string `json:"structure"`
	Side      string `json:"side,omitempty"`
}

// PlaneGroup is one plane group: "axial" (T1, T2, T1+C stacked, 512×1644) or
// "coronal" (T1+C FS over T1, 512×1096), at Position mm along its normal.
type PlaneGroup struct {
	Image
	Plane    string  `json:"plane"`
	Position float64 `json:"position"`
}

package configs

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Structure is one base anatomical structure of the anatomical panel.
type Structure struct {
	// ID is the snake_case name models must answer with.
	ID string `yaml:"id"`
	// TLevel is the T category invasion of this structure implies under the
	// deterministic T rule (1 = no upstaging).
	TLevel int `yaml:"t_level"`
	// Bilateral structures have a left and a right card.
	Bilateral bool `yaml:"bilateral"`
	// Group is the anatomical group the T rule names (skull_base, ...).
	Group string `yaml:"group"`
	// Synonyms are other spellings normalised to ID when extracting answers.
	Synonyms []string `yaml:"synonyms"`
}

// Structures is the ordered structure list of structures.yaml.
type Structures struct {
	List []Structure `yaml:"structures"`
	byID map[string]int
}

// LoadStructures reads and validates a structure list. name is the path
// used in error messages.
func LoadStructures(fsys fs.FS, name string) (*Structures, error) {
	var s Structures
	if err := decodeFile(fsys, name, &s); err != nil {
		return nil, err
	}
	if err := s.index(name); err != nil {
		return nil, err
	}
	return &s, nil
}

// DefaultStructures returns the embedded structure list.
func DefaultStructures() *Structures {
	s, err := LoadStructures(Defaults, "structures.yaml")
	if err != nil {
		// The embedded file is tested; reaching this is a build defect.
		panic(fmt.Sprintf("configs: embedded structures.yaml: %v", err))
	}
	return s
}

func (s *Structures) index(name string) error {
	if len(s.List) == 0 {
		return fmt.Errorf("%s: field structures: the list is empty; add the base structures with id and t_level", name)
	}
	s.byID = make(map[string]int, len(s.List))
	for i, st := range s.List {
		if st.ID == "" {
			return fmt.Errorf("%s: structures[%d]: field id is empty", name, i)
		}
		if st.TLevel < 1 || st.TLevel > 4 {
			return fmt.Errorf("%s: structure %q: field t_level is %d; want 1..4", name, st.ID, st.TLevel)
		}
		if _, dup := s.byID[st.ID]; dup {
			return fmt.Errorf("%s: structure %q is listed twice", name, st.ID)
		}
		s.byID[st.ID] = i
	}
	return nil
}

// IDs returns the structure ids in file order.
func (s *Structures) IDs() []string {
	ids := make([]string, len(s.List))
	for i, st := range s.List {
		ids[i] = st.ID
	}
	return ids
}

// Get returns the structure with the given id.
func (s *Structures) Get(id string) (Structure, bool) {
	i, ok := s.byID[id]
	if !ok {
		return Structure{}, false
	}
	return s.List[i], true
}

// Normalize maps a model's spelling of a structure (any case, spaces or
// hyphens for underscores, a left/right qualifier, or a synonym) to its id.
// It reports false when the name matches no structure.
func (s *Structures) Normalize(name string) (string, bool) {
	key := canonical(name)
	for _, side := range []string{"left_", "right_", "l_", "r_"} {
		key = strings.TrimPrefix(key, side)
	}
	for _, side := range []string{"_left", "_right", "_l", "_r"} {
		key = strings.TrimSuffix(key, side)
	}
	if _, ok := s.byID[key]; ok {
		return key, true
	}
	for _, st := range s.List {
		for _, syn := range st.Synonyms {
			if canonical(syn) == key {
				return st.ID, true
			}
		}
	}
	return "", false
}

// Cards returns the card keys in card order: each structure, then each side
// of a bilateral one ("cavernous_sinus/left").
func (s *Structures) Cards() []string {
	var out []string
	for _, st := range s.List {
		if st.Bilateral {
			out = append(out, st.ID+"/left", st.ID+"/right")
		} else {
			out = append(out, st.ID)
		}
	}
	return out
}

// TRule applies the deterministic T rule of NPCBench (Appendix C.3.4) to a
// set of invaded structures: the highest t_level among them, T1 when none.
// Unknown ids are ignored; callers validate ids first.
func (s *Structures) TRule(invaded []string) string {
	level := 1
	for _, id := range invaded {
		if st, ok := s.Get(id); ok && st.TLevel > level {
			level = st.TLevel
		}
	}
	return fmt.Sprintf("T%d", level)
}

// Sorted returns ids sorted alphabetically, for stable map output.
func Sorted(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

func canonical(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer(" ", "_", "-", "_", "(", "", ")", "").Replace(s)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.Trim(s, "_")
}

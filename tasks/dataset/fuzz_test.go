package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadPrepared: any manifest gives a manifest or an error; an accepted
// one names only images that exist inside its folder.
func FuzzLoadPrepared(f *testing.F) {
	f.Add([]byte(`{"format":"npcorch-prepared/1","patients":[{"id":"P01","overview":{"path":"a.png","sha256":"x","bytes":1,"width":1,"height":1}}]}`))
	f.Add([]byte(`{"format":"npcorch-prepared/1","patients":[{"id":"P01","pages":[{"path":"../a.png"}],"t_groups":[{"path":"a.png","plane":"axial","position":1.5}]}]}`))
	f.Add([]byte(`{"format":"npcorch-prepared/1","patients":[{"id":"P01","cards":[{"path":"/etc/passwd","structure":"clivus"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := LoadPrepared(dir)
		if err != nil {
			if !strings.Contains(err.Error(), "manifest.json") {
				t.Fatalf("error does not name the manifest: %v", err)
			}
			return
		}
		for _, pt := range p.Patients {
			for _, img := range pt.images() {
				if checkInside(dir, img.Path, true) != nil {
					t.Fatalf("accepted image path %q", img.Path)
				}
			}
		}
	})
}

package tasks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

// benchmark is NPCBench's tasks, whose items these tests build.
func benchmark() *tasks.Registry { return npcbench.Registry(configs.DefaultStructures()) }

// writeImage writes an image file under root and returns it as the
// prepared dataset lists it.
func writeImage(t *testing.T, root, name string, data []byte) dataset.Image {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return dataset.Image{Path: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
}

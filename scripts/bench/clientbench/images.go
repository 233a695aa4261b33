package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// Image geometry of an MRI plane group as npcorch prepares it.
const (
	imageWidth  = 512
	imageHeight = 1644
)

// writeImages writes n grey 512×1644 PNGs into dir, deterministically from
// seed: a smooth anatomy-like gradient with 4 bits of noise, which PNG
// compresses to about 450 KB, the size of a prepared plane group.
func writeImages(dir string, n int, seed uint64) ([]dataset.Image, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]dataset.Image, n)
	for i := range out {
		img := image.NewGray(image.Rect(0, 0, imageWidth, imageHeight))
		for y := 0; y < imageHeight; y++ {
			row := img.Pix[y*img.Stride : y*img.Stride+imageWidth]
			for x := range row {
				base := (x/4 + y/8 + 13*i) & 0x7f
				row[x] = byte(base + rng.IntN(16))
			}
		}
		name := fmt.Sprintf("group%02d.png", i)
		path := filepath.Join(dir, name)
		if err := writePNG(path, img); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("images: %w", err)
		}
		sum := sha256.Sum256(data)
		out[i] = dataset.Image{Path: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data)),
			Width: imageWidth, Height: imageHeight}
	}
	return out, nil
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	w := bufio.NewWriter(f)
	if err := png.Encode(w, img); err != nil {
		f.Close()
		return fmt.Errorf("images: encode %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("images: write %s: %w", path, err)
	}
	return f.Close()
}

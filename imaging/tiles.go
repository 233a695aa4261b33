package imaging

import (
	"context"
	"fmt"
	"image"
	"sync"
)

// TileCache shares tiles (FitTile results) between the outputs of a batch
// that show the same slice at the same size: plane groups of the T and N
// ranges, CarePath pages, panels and cards of one patient resize many
// slices more than once. The batch announces each planned use (Expect);
// the first use resizes the slice, later ones get the same tile, and the
// tile is dropped at its last announced use, so only tiles still awaited
// stay in memory, and at most the byte limit of them: a tile that would
// exceed it is made again at its next use. A use that was not announced
// resizes without keeping the result. Tiles are shared: callers must not
// modify them.
//
// A TileCache is safe for concurrent use. Attach it to series through
// ReadOptions.Tiles or Series.Tiles; make one with NewTileCache.
type TileCache struct {
	limit int64

	mu      sync.Mutex
	held    int64 // bytes of tiles kept for later uses
	entries map[tileKey]*tileEntry
	made    int // tiles resized, for tests and reports

	// coeffs are the resampling coefficients of the tiles' axes, shared
	// by every tile made through the cache.
	coeffs coeffMemo
}

type tileKey struct {
	series      *Series
	index, size int
}

type tileEntry struct {
	uses    int  // announced uses not yet served
	started bool // a use is making the tile
	kept    int64
	done    chan struct{} // closed when tile, fit and err are set
	tile    *image.Gray
	fit     Fit
	err     error
}

// NewTileCache returns an empty cache that keeps at most limit bytes of
// tiles for later uses.
func NewTileCache(limit int64) *TileCache {
	return &TileCache{limit: limit, entries: map[tileKey]*tileEntry{}}
}

// Expect announces one future use of slice i of s in a size×size tile.
func (c *TileCache) Expect(s *Series, i, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := tileKey{s, i, size}
	e := c.entries[k]
	if e == nil {
		e = &tileEntry{done: make(chan struct{})}
		c.entries[k] = e
	}
	e.uses++
}

// Forgo withdraws an announced use that will not happen (say, its output
// was already made by an earlier run).
func (c *TileCache) Forgo(s *Series, i, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[tileKey{s, i, size}]; e != nil {
		c.served(tileKey{s, i, size}, e)
	}
}

// served counts one use of e as done and drops e after its last; c.mu is
// held.
func (c *TileCache) served(k tileKey, e *tileEntry) {
	if e.uses--; e.uses > 0 {
		return
	}
	delete(c.entries, k)
	c.held -= e.kept
	e.kept = 0
}

// Stats returns the bytes of tiles kept now and the number of tiles
// resized so far.
func (c *TileCache) Stats() (held int64, made int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held, c.made
}

// Tile serves one use of slice i of s in a size×size tile.
func (c *TileCache) Tile(ctx context.Context, s *Series, i, size int) (*image.Gray, Fit, error) {
	k := tileKey{s, i, size}
	c.mu.Lock()
	e := c.entries[k]
	if e == nil {
		c.made++
		c.mu.Unlock()
		return s.fitTile(ctx, i, size)
	}
	c.served(k, e)
	if e.started {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.tile, e.fit, e.err
		case <-ctx.Done():
			return nil, Fit{}, ctx.Err()
		}
	}
	e.started = true
	c.made++
	c.mu.Unlock()

	e.tile, e.fit, e.err = s.fitTile(ctx, i, size)
	close(e.done)
	c.mu.Lock()
	if c.entries[k] == e { // later uses await it
		n := int64(size) * int64(size)
		if c.held+n <= c.limit {
			e.kept, c.held = n, c.held+n
		} else {
			// Over the limit: the next use makes the tile again.
			c.entries[k] = &tileEntry{uses: e.uses, done: make(chan struct{})}
		}
	}
	c.mu.Unlock()
	return e.tile, e.fit, e.err
}

// Tile returns slice i fitted into a size×size tile (FitTile with the
// series' pixel spacing), shared through s.Tiles when it is set. The tile
// must not be modified.
func (s *Series) Tile(ctx context.Context, i, size int) (*image.Gray, Fit, error) {
	if s.Tiles != nil {
		return s.Tiles.Tile(ctx, s, i, size)
	}
	return s.fitTile(ctx, i, size)
}

func (s *Series) fitTile(ctx context.Context, i, size int) (*image.Gray, Fit, error) {
	sl, err := s.Slice(ctx, i)
	if err != nil {
		return nil, Fit{}, err
	}
	var memo *coeffMemo
	if s.Tiles != nil {
		memo = &s.Tiles.coeffs
	}
	tile, fit, err := fitTile(sl, s.Meta.PixelSpacing, size, memo)
	if err != nil {
		return nil, Fit{}, fmt.Errorf("series %s slice %d: %w", s.Dir, i, err)
	}
	return tile, fit, nil
}

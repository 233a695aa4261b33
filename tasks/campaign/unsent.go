package campaign

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/send"
)

// unsentFile is RUN/unsent.json: the items whose request for a model the
// last run could not build (an image that changed after prep, an answer
// its prompt needs that did not come), each with why. The journal holds
// no record of them (no request was made), so the score files read them
// from here: `npcorch score` lists them as the run did.
const unsentFile = "unsent.json"

// unsentFormat tags unsent.json.
const unsentFormat = "npcorch-unsent/1"

type unsentDoc struct {
	Format string              `json:"format"`
	Items  []score.LeftOutItem `json:"items"`
}

// unsentItems are the item problems of the run's summaries, one per
// model, item and reason (a problem of every repeat counts once), in the
// summaries' model order, then by item.
func unsentItems(sums []send.Summary) []score.LeftOutItem {
	var out []score.LeftOutItem
	for _, s := range sums {
		var items []score.LeftOutItem
		for _, p := range s.Problems {
			// "item ITEM: " that a reason may begin with says the item twice
			reason := strings.TrimPrefix(p.Reason, "item "+p.Item+": ")
			items = append(items, score.LeftOutItem{Model: s.Model, Item: p.Item, Reason: reason})
		}
		slices.SortFunc(items, func(a, b score.LeftOutItem) int {
			return cmp.Or(strings.Compare(a.Item, b.Item), strings.Compare(a.Reason, b.Reason))
		})
		out = append(out, slices.Compact(items)...)
	}
	return out
}

// writeUnsent writes RUN/unsent.json for this run (none left from an
// earlier one), and one line per item to log (events.log).
func writeUnsent(runDir string, items []score.LeftOutItem, log io.Writer) error {
	path := filepath.Join(runDir, unsentFile)
	if len(items) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("run directory: %w", err)
		}
		return nil
	}
	for _, it := range items {
		fmt.Fprintf(log, "not sent: %s, %s: %s\n", it.Model, it.Item, it.Reason)
	}
	return writeJSON(path, unsentDoc{Format: unsentFormat, Items: items})
}

// readUnsent reads RUN/unsent.json; none when the last run built every
// request (or was of an older npcorch).
func readUnsent(runDir string) ([]score.LeftOutItem, error) {
	path := filepath.Join(runDir, unsentFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var doc unsentDoc
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err == nil && doc.Format != unsentFormat {
		err = fmt.Errorf("format %q, want %q", doc.Format, unsentFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w; it lists the requests the run could not build: remove it to score without them, or run again with --resume", path, err)
	}
	return doc.Items, nil
}

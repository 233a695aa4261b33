// Package live is the live view of a campaign: the status model (Snapshot,
// the JSON of /api/status and of RUN/status.json), the Hub that builds it
// from what the campaign tells it, and the Server that shows it — a
// self-contained page updated over server-sent events, Prometheus metrics
// beside the GPUs' DCGM metrics, and the JSON.
//
// The campaign's loop owns the run's state and never shares it: it posts
// immutable events (a request journaled, an engine event, a replica
// assigned, a model ended, a GPU sample) to the Hub, which never blocks it.
// The Hub's goroutine is the one owner of the live state; it publishes an
// immutable Snapshot a few times a second, and HTTP handlers read only
// published snapshots. The Hub writes the latest snapshot to RUN/status.json
// now and then, which is what `npcorch status` reads when no server runs
// (docs/live.md documents both formats).
//
// This package must not touch the campaign's loop, the scheduler or the
// engines: it learns what happened from events and shows it.
package live

// Package inference is the seam between npcorch and the engines: the
// streaming OpenAI-compatible client (Client, with its attempt failures,
// timings and usage), the pool that spreads one model's requests over its
// replicas with bounded, adaptive concurrency (Pool), the engines' error
// bodies, and inline media — request bodies whose image placeholders are
// streamed as the prepared files' own bytes, base64-encoded, never held in
// memory.
//
// It knows no task, item, prompt or journal: it sends request bodies to
// endpoints and returns answers. It starts no engine (package launcher)
// and reads no pixel (package imaging).
package inference

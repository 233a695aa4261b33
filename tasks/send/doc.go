// Package send sends one model's items: the Runner builds each item's
// request (tasks.RequestBuilder), sends it through the model's pool
// (package tasks/inference) with retries and backoff, and journals every
// outcome (package tasks/journal); the dispatcher orders the items (the
// tasks whose answers other prompts need first, held dependents released
// as the answers they need arrive, a serial conversation turn by turn);
// Progress reports a model's run as it goes, as a bar on a terminal or a
// line a minute in a log.
//
// It knows tasks only through the contract of package tasks (Registry,
// Item, Request): it names no task and no family, and it neither starts
// engines (package launcher) nor scores (package tasks/score).
//
// The package is called send, not run: "run" is the run folder in every
// caller, and a campaign's Run is the whole application.
package send

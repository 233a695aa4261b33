// Package tasks is the contract of a benchmark: what a benchmark family
// gives npcorch and what every other room reads of it. A family (package
// tasks/npcbench; the CliniCARE family beside it) describes each task as a
// Task value — its items (Build, with a Builder over the raw dataset and
// its prepared images), its prompt, the images it needs, how its answers
// are extracted, the answers it needs from other tasks, its simulated
// answers and its paper-scale request mix — and registers them in a
// Registry (NewRegistry of a Benchmark), with the Scoring that says how
// its answers are scored across tasks. From a registry this package
// builds the items (Item, BuildItems), renders their prompts (Prompts)
// and turns each into the request a model is sent (Request,
// RequestBuilder: images as the prepared files' own bytes or file://
// URLs, never re-encoded, and the key that identifies the request in the
// journal), and writes the simulated engine's answer key (BuildSimKey).
//
// It knows no family, and nothing here names a task: a task is added in its
// own descriptor file (docs/architecture.md, "Adding a benchmark family").
// Sending requests is package tasks/send over tasks/inference, the journal
// is tasks/journal, judging tasks/judge, scoring tasks/score, the
// application tasks/campaign. This package starts no engine (package
// launcher) and draws no pixel (package imaging).
package tasks

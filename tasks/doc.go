// Package tasks turns a benchmark's items into requests and answers into a
// journal (package tasks/journal) and scores. It knows the benchmark's tasks only through the
// Registry it is handed (one Task descriptor per task, the Composite
// endpoints computed across tasks, the score table's columns; package
// tasks/npcbench holds NPCBench's): with it, it builds the items from a raw
// dataset and its prepared images, renders each task's prompt, writes the
// simulated engine's answer key, sends each request through the streaming
// OpenAI-compatible client of package tasks/inference, appends
// every outcome to an append-only journal that a crashed run resumes from,
// and scores a run from its journal alone. Reading the journal works
// around no line in silence: a torn, corrupt, misfiled or repeated line,
// or a record of a model, task, item or repeat the run does not have, is a
// journal.Problem naming its file and line and what was done, and the score
// files count them.
//
// Nothing here names a task: a task is added in its own descriptor file
// (docs/architecture.md, "Adding a task"). Extraction and scoring
// primitives live in tasks/extract and tasks/score. This package starts no
// engine (package launcher) and draws no pixel (package imaging): images
// travel as the prepared files' own bytes or as file:// URLs, never
// re-encoded.
package tasks

// Package tasks turns NPCBench items into requests and answers into a
// journal: it builds the L3 and L6 items from a raw dataset and its prepared
// images, renders the paper's prompts, sends each request through a
// streaming OpenAI-compatible client with bounded, adaptive concurrency, and
// appends every outcome to an append-only journal that a crashed run resumes
// from. Reading the journal works around no line in silence: a torn,
// corrupt, misfiled or repeated line, or a record of a model, task, item or
// repeat the run does not have, is a JournalProblem naming its file and line
// and what was done, and the score files count them.
//
// Extraction and scoring live in tasks/extract and tasks/score and read only
// the journal and the dataset. This package starts no engine (package
// launcher) and draws no pixel (package imaging): images travel as the
// prepared files' own bytes or as file:// URLs, never re-encoded.
package tasks

// Package archtest holds the tests that keep npcorch's import graph as
// docs/architecture.md draws it: arrows run one way between the top-level
// rooms (cmd → tasks → {launcher, imaging} → gpu, configs at the ground;
// scripts beside cmd), in production code and in test code alike; inside
// tasks/, inference and the journal know no task, no benchmark family
// imports another, the root imports no family, and the campaign is
// imported by cmd (and the drivers in scripts) alone; and inside each
// package of tasks/, no file leans on a file that leans back on it.
//
// It has no code of its own: `go test ./scripts/archtest` reads the graph
// with `go list` (and each package of tasks/ with go/types, its imports
// from their export data) and fails naming each edge or circle that breaks
// a rule; with -v it also prints the graph, one line per package. Each rule
// is also run on a synthetic graph, to prove it catches a break.
package archtest

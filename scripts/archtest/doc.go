// Package archtest holds the test that keeps npcorch's import graph as
// docs/architecture.md draws it: arrows run one way between the top-level
// rooms (cmd → tasks → {launcher, imaging} → gpu, configs at the ground;
// scripts beside cmd), in production code and in test code alike.
//
// It has no code of its own: `go test ./scripts/archtest` reads the graph
// with `go list` and fails naming each edge that breaks a rule; with -v it
// also prints the graph, one line per package.
package archtest

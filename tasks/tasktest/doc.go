// Package tasktest proves docs/architecture.md's "Adding a task": its test
// adds a small task in one file of its own, without touching any other
// file, and takes it through the whole machinery of package tasks (items,
// prompt, simulated engine, journal, scores, Table 1, paper-scale plan).
// It holds no code of its own.
package tasktest

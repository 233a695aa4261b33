// Package tasktest proves docs/architecture.md's "Adding a task" and
// "Adding a benchmark family". TestAddingATask adds a small task in one
// file of its own and takes it through items, prompt, simulated engine,
// journal, scores, Table 1 and the paper-scale plan. TestAddingAFamily
// takes a family that is a package of its own (toyfamily: a closed
// question and a free-text question judged criterion by criterion) from a
// dataset to its score table on two simulated engines, a generator and a
// judge, touching no other package. It holds no code of its own.
package tasktest

// Package dataset owns npcorch's on-disk dataset formats (docs/dataset.md):
// the raw dataset (patients, MRI series, pathology slides, labels, CarePath
// episodes) that `npcorch synth` writes and `npcorch prep` reads, and the
// prepared manifest that `npcorch prep` writes and the task runner reads.
//
// It loads and validates them and nothing more: it draws no pixel (package
// imaging) and sends no request (package tasks).
package dataset

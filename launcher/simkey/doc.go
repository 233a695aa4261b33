// Package simkey is the answer key of npcorch's simulated engine: the file
// format that package tasks writes from a benchmark's items and that
// launcher/simengine reads, and the image fingerprint by which a request is
// recognised. It owns the format alone: it knows nothing of benchmarks,
// tasks or engines, and does no I/O beyond reading and writing a key file.
package simkey

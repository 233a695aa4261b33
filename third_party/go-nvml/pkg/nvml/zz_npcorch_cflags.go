// This file is npcorch's only change to go-nvml v0.13.4-1 (see
// third_party/README.md in npcorch). nvml.h marks 29 functions
// DEPRECATED(13.0); cgo writes a C wrapper for every function the package
// calls, so compiling this package made the C compiler print a
// -Wdeprecated-declarations warning, with its note, for each: 147
// lines on the first build on a fresh machine. A #cgo directive applies
// to every C file of the package it is in, and only to that package, so
// this silences exactly those warnings and no warning of npcorch's own C.

package nvml

/*
#cgo CFLAGS: -Wno-deprecated-declarations
*/
import "C"

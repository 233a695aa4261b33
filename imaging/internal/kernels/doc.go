// Package kernels holds the AVX2 kernels of imaging's Lanczos passes
// (Pillow's 8-bit resampling, int32 fixed point with 22 fraction bits)
// and of its RGB to RGBA expansion.
// It owns no state beyond the CPU feature flag read at start-up, and
// trusts its callers' bounds: package imaging checks every tap before a
// call. It is a package of its own because Go assembly cannot sit in a
// package that uses cgo, as imaging does with its openslide and
// libdeflate tags.
package kernels

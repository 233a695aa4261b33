//go:build !amd64 || purego

package kernels

// Available reports false: this build has no kernels.
func Available() bool { return false }

// HorizontalRGBA is not available in this build.
func HorizontalRGBA(out, in []byte, bounds []int, kk []int32, ksize int) {
	panic("kernels: no kernels in this build; check Available")
}

// Vertical is not available in this build.
func Vertical(out, src []byte, stride int, k []int32, orMask uint32) {
	panic("kernels: no kernels in this build; check Available")
}

// ExpandRGB is not available in this build.
func ExpandRGB(dst, src []byte) int {
	panic("kernels: no kernels in this build; check Available")
}

// UnfilterPaeth is not available in this build.
func UnfilterPaeth(cur, prev []byte, bpp int) int {
	panic("kernels: no kernels in this build; check Available")
}

// UnfilterAverage is not available in this build.
func UnfilterAverage(cur, prev []byte, bpp int) int {
	panic("kernels: no kernels in this build; check Available")
}

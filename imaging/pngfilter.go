package imaging

import "encoding/binary"

// PNG row filters (PNG specification, section 9), for the encoder and the
// decoder. The encoder's filters work on eight bytes at a time (SWAR on
// uint64 words); they give exactly the bytes of the byte-by-byte
// definitions, which the tests keep as the reference.

// Filter types.
const (
	ftNone = iota
	ftSub
	ftUp
	ftAverage
	ftPaeth
)

// Byte-lane masks: the high bit of every byte, and the other seven.
const (
	laneHigh = 0x8080808080808080
	laneLow  = 0x7f7f7f7f7f7f7f7f
	laneOne  = 0x0101010101010101
	lane16   = 0x00ff00ff00ff00ff
)

// subBytes subtracts y from x in each byte lane, modulo 256.
func subBytes(x, y uint64) uint64 {
	return ((x | laneHigh) - (y &^ laneHigh)) ^ ((x ^ ^y) & laneHigh)
}

// avgBytes is floor((x+y)/2) in each byte lane.
func avgBytes(x, y uint64) uint64 {
	return (x & y) + ((x ^ y) >> 1 & laneLow)
}

// absBytes is |int8(b)| of each byte lane (0..128, which fits a byte).
func absBytes(v uint64) uint64 {
	sign := v >> 7 & laneOne
	return (v ^ sign*0xff) + sign
}

// filterRow writes the five PNG filters of cur into cand (each prefixed by
// its filter type byte) and returns the index of the one with the
// smallest sum of absolute (signed) values, the first on ties, as
// image/png does.
func filterRow(cand *[5][]byte, cur, prev []byte, bpp int) int {
	n := len(cur)
	for i := range cand {
		cand[i][0] = byte(i)
	}
	none, sub, up, avg, paeth := cand[0][1:n+1], cand[1][1:n+1], cand[2][1:n+1], cand[3][1:n+1], cand[4][1:n+1]
	prev = prev[:n]
	copy(none, cur)
	head := min(bpp, n)
	for i := 0; i < head; i++ {
		sub[i] = cur[i]
		avg[i] = cur[i] - prev[i]/2
		paeth[i] = cur[i] - prev[i]
	}
	i := head
	for ; i+8 <= n; i += 8 {
		c := binary.LittleEndian.Uint64(cur[i:])
		a := binary.LittleEndian.Uint64(cur[i-bpp:])
		b := binary.LittleEndian.Uint64(prev[i:])
		binary.LittleEndian.PutUint64(sub[i:], subBytes(c, a))
		binary.LittleEndian.PutUint64(avg[i:], subBytes(c, avgBytes(a, b)))
	}
	for ; i < n; i++ {
		sub[i] = cur[i] - cur[i-bpp]
		avg[i] = cur[i] - byte((int(cur[i-bpp])+int(prev[i]))>>1)
	}
	i = 0
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(up[i:], subBytes(binary.LittleEndian.Uint64(cur[i:]), binary.LittleEndian.Uint64(prev[i:])))
	}
	for ; i < n; i++ {
		up[i] = cur[i] - prev[i]
	}
	paethRow(paeth, cur, prev, bpp)

	best, bestSum := 0, sumAbs(none)
	for f, p := range [4][]byte{sub, up, avg, paeth} {
		if s := sumAbs(p); s < bestSum {
			best, bestSum = f+1, s
		}
	}
	return best
}

// paethRow writes the Paeth filter of cur from byte bpp on; the
// predictor is chosen without branches (the compiler emits conditional
// moves), since on photographic rows the choice is unpredictable.
func paethRow(dst, cur, prev []byte, bpp int) {
	n := len(cur)
	if bpp >= n {
		return
	}
	dst = dst[bpp:n]
	left, up, upLeft, cur := cur[:n-bpp], prev[bpp:n], prev[:n-bpp], cur[bpp:n]
	for i := range dst {
		a, b, c := int(left[i]), int(up[i]), int(upLeft[i])
		dst[i] = cur[i] - byte(paethPredict(a, b, c))
	}
}

// paethPredict is the Paeth predictor of a (left), b (up) and c (up-left).
func paethPredict(a, b, c int) int {
	pa, pb := b-c, a-c
	pc := pa + pb
	pa = (pa ^ (pa >> 63)) - (pa >> 63)
	pb = (pb ^ (pb >> 63)) - (pb >> 63)
	pc = (pc ^ (pc >> 63)) - (pc >> 63)
	pred := c
	if pb <= pc {
		pred = b
	}
	if pa <= min(pb, pc) {
		pred = a
	}
	return pred
}

// sumAbs sums the bytes of p read as signed values, in absolute value.
func sumAbs(p []byte) int {
	s := 0
	for len(p) >= 8 {
		// Sixteen-bit lanes hold up to 255 words of two bytes of at most 128.
		var acc uint64
		k := min(len(p)/8, 255)
		for j := 0; j < k; j++ {
			v := absBytes(binary.LittleEndian.Uint64(p[8*j:]))
			acc += v&lane16 + v>>8&lane16
		}
		s += int(acc&0xffff + acc>>16&0xffff + acc>>32&0xffff + acc>>48)
		p = p[8*k:]
	}
	for _, b := range p {
		v := int(int8(b))
		s += (v ^ (v >> 63)) - (v >> 63)
	}
	return s
}

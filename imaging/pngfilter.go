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

// filterRow chooses the PNG filter of cur (the row above is prev) with
// the smallest sum of absolute (signed) values, the first on ties, as
// image/png does, and returns its type; cand[type] then holds the
// filtered row prefixed by its type byte (the other candidates may be
// partly written). The sums are taken as the filters are computed, and
// Paeth, the costliest and the last in the order, stops as soon as it
// cannot win.
func filterRow(cand *[5][]byte, cur, prev []byte, bpp int) int {
	n := len(cur)
	for i := range cand {
		cand[i][0] = byte(i)
	}
	sub, up, avg := cand[1][1:n+1], cand[2][1:n+1], cand[3][1:n+1]
	prev = prev[:n]
	var sNone, sSub, sUp, sAvg absSum
	head := min(bpp, n)
	for i := 0; i < head; i++ {
		sub[i] = cur[i]
		up[i] = cur[i] - prev[i]
		avg[i] = cur[i] - prev[i]/2
		sNone.byte(cur[i])
		sSub.byte(sub[i])
		sUp.byte(up[i])
		sAvg.byte(avg[i])
	}
	i := head
	for ; i+8 <= n; i += 8 {
		c := binary.LittleEndian.Uint64(cur[i:])
		a := binary.LittleEndian.Uint64(cur[i-bpp:])
		b := binary.LittleEndian.Uint64(prev[i:])
		fs, fu, fa := subBytes(c, a), subBytes(c, b), subBytes(c, avgBytes(a, b))
		binary.LittleEndian.PutUint64(sub[i:], fs)
		binary.LittleEndian.PutUint64(up[i:], fu)
		binary.LittleEndian.PutUint64(avg[i:], fa)
		sNone.word(c)
		sSub.word(fs)
		sUp.word(fu)
		sAvg.word(fa)
	}
	for ; i < n; i++ {
		sub[i] = cur[i] - cur[i-bpp]
		up[i] = cur[i] - prev[i]
		avg[i] = cur[i] - byte((int(cur[i-bpp])+int(prev[i]))>>1)
		sNone.byte(cur[i])
		sSub.byte(sub[i])
		sUp.byte(up[i])
		sAvg.byte(avg[i])
	}
	best, bestSum := ftNone, sNone.total()
	for f, s := range [...]int{sSub.total(), sUp.total(), sAvg.total()} {
		if s < bestSum {
			best, bestSum = f+1, s
		}
	}
	if paethRow(cand[4][1:n+1], cur, prev, bpp, bestSum) {
		best = ftPaeth
	}
	if best == ftNone {
		copy(cand[0][1:n+1], cur)
	}
	return best
}

// absSum adds up bytes read as signed values, in absolute value, eight at
// a time in sixteen-bit lanes (a lane holds 255 words of two bytes of at
// most 128 before it is folded into the total).
type absSum struct {
	acc   uint64
	words int
	sum   int
}

func (s *absSum) word(v uint64) {
	v = absBytes(v)
	s.acc += v&lane16 + v>>8&lane16
	if s.words++; s.words == 255 {
		s.fold()
	}
}

func (s *absSum) byte(b byte) {
	v := int(int8(b))
	s.sum += (v ^ (v >> 63)) - (v >> 63)
}

func (s *absSum) fold() {
	s.sum += int(s.acc&0xffff + s.acc>>16&0xffff + s.acc>>32&0xffff + s.acc>>48)
	s.acc, s.words = 0, 0
}

func (s *absSum) total() int {
	s.fold()
	return s.sum
}

// paethRow writes the Paeth filter of cur into dst and reports whether
// the sum of its absolute values is below limit; it stops as soon as it
// cannot be (dst is then partly written). The predictor is chosen
// without branches (the compiler emits conditional moves), since on
// photographic rows the choice is unpredictable.
func paethRow(dst, cur, prev []byte, bpp int, limit int) bool {
	n := len(cur)
	var sum absSum
	head := min(bpp, n)
	for i := 0; i < head; i++ {
		dst[i] = cur[i] - prev[i]
		sum.byte(dst[i])
	}
	// Blocks of 64 bytes: the sum is checked after each.
	for start := head; start < n; start += 64 {
		end := min(start+64, n)
		d := dst[start:end]
		left, up, upLeft, c := cur[start-bpp:end-bpp], prev[start:end], prev[start-bpp:end-bpp], cur[start:end]
		for i := range d {
			a, b, cc := int(left[i]), int(up[i]), int(upLeft[i])
			d[i] = c[i] - byte(paethPredict(a, b, cc))
		}
		j := 0
		for ; j+8 <= len(d); j += 8 {
			sum.word(binary.LittleEndian.Uint64(d[j:]))
		}
		for ; j < len(d); j++ {
			sum.byte(d[j])
		}
		if sum.total() >= limit {
			return false
		}
	}
	return sum.total() < limit
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

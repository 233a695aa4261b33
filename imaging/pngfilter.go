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
// cannot be (dst is then partly written). The predictor is computed
// eight bytes at a time without branches (paethWord), since on
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
		j := start
		for ; j+8 <= end; j += 8 {
			x := binary.LittleEndian.Uint64(cur[j:])
			a := binary.LittleEndian.Uint64(cur[j-bpp:])
			b := binary.LittleEndian.Uint64(prev[j:])
			c := binary.LittleEndian.Uint64(prev[j-bpp:])
			f := subBytes(x, paethWord(a, b, c))
			binary.LittleEndian.PutUint64(dst[j:], f)
			sum.word(f)
		}
		for ; j < end; j++ {
			dst[j] = cur[j] - byte(paethPredict(int(cur[j-bpp]), int(prev[j]), int(prev[j-bpp])))
			sum.byte(dst[j])
		}
		if sum.total() >= limit {
			return false
		}
	}
	return sum.total() < limit
}

// Sixteen-bit lane constants of paethWord.
const (
	lanes16Bias = 0x0400040004000400 // K: keeps lane differences positive
	lanes16Top  = 0x8000800080008000
	lanes16Bit0 = 0x0001000100010001
)

// paethWord is the Paeth predictor of eight byte lanes at once (a: left,
// b: up, c: up-left), computed on the even and the odd bytes in
// sixteen-bit lanes; it equals paethPredict in every lane.
func paethWord(a, b, c uint64) uint64 {
	return paethLanes(a&lane16, b&lane16, c&lane16) | paethLanes(a>>8&lane16, b>>8&lane16, c>>8&lane16)<<8
}

// paethLanes is the Paeth predictor of four sixteen-bit lanes holding
// 0..255 each: pa = |b−c|, pb = |a−c|, pc = |a+b−2c| are taken on values
// biased by K so that no lane borrows from the next, and compared through
// the top bit of (y + 2¹⁵ − x), set when x ≤ y.
func paethLanes(a, b, c uint64) uint64 {
	pa := absBiased(b + lanes16Bias - c)
	pb := absBiased(a + lanes16Bias - c)
	pc := absBiased(a + b + lanes16Bias - c - c)
	le := func(x, y uint64) uint64 { return ((y | lanes16Top) - x) & lanes16Top >> 15 * 0xffff }
	selA := le(pa, pb) & le(pa, pc)
	selB := ^selA & le(pb, pc)
	selC := ^(selA | selB)
	return a&selA | b&selB | c&selC
}

// absBiased returns |x − K| of lanes holding x in (0, 2K).
func absBiased(x uint64) uint64 {
	ge := (x >> 10 & lanes16Bit0) * 0xffff // x ≥ K: bit 10 is set, as x < 2K = 2¹¹
	sel := x&ge | (2*lanes16Bias-x)&^ge
	return sel - lanes16Bias
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

package pqread

// The x86-64 loops of unsplit join 16 values at a time with SSE2 byte,
// word and doubleword interleaves (every x86-64 CPU has SSE2): at 8 bytes
// a value, 8 loads, 24 interleaves and 8 stores where the portable loop
// takes a load per stream and 24 shifts and masks per 8 values.

//go:noescape
func unsplit8SSE2(dst, src *byte, nn, blocks int)

//go:noescape
func unsplit4SSE2(dst, src *byte, nn, blocks int)

// unsplitBlocks joins the first 16*k values of the w streams of src
// (nn values each) into dst and returns 16*k; 0 if it has no loop for w.
func unsplitBlocks(dst, src []byte, w, nn int) int {
	k := nn / 16
	if k == 0 || len(dst) < nn*w || len(src) < nn*w {
		return 0
	}
	switch w {
	case 8:
		unsplit8SSE2(&dst[0], &src[0], nn, k)
	case 4:
		unsplit4SSE2(&dst[0], &src[0], nn, k)
	default:
		return 0
	}
	return 16 * k
}

package clinicare

import "strconv"

// itoa writes an integer as the records spell it.
func itoa(i int) string { return strconv.Itoa(i) }

// ftoa writes a number as the records spell it, with no trailing zeros.
func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

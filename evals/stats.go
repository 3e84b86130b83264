package evals

import "math"

// tQuantile975 is Student's t distribution's 0.975 quantile by degrees
// of freedom, 1 to 30: the half-width of a 95% interval in standard
// errors. Beyond 30 the normal's 1.96 is within 2%.
var tQuantile975 = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

func t975(df int) float64 {
	if df <= len(tQuantile975) {
		return tQuantile975[df-1]
	}
	return 1.96
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// halfWidth is the half-width of the 95% interval of the mean of xs,
// and false when there are fewer than two to tell a spread from.
func halfWidth(xs []float64) (float64, bool) {
	n := len(xs)
	if n < 2 {
		return 0, false
	}
	// Shifted by the first value, so that equal values have no spread
	// at all rather than a rounding error's.
	d := make([]float64, n)
	for i, x := range xs {
		d[i] = x - xs[0]
	}
	m, ss := mean(d), 0.0
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return t975(n-1) * sd / math.Sqrt(float64(n)), true
}

# SPDX-License-Identifier: MIT
# fit.awk: least-squares fits for the test host's scripts (scenarios and
# exec scripts: awk -f "$SDSWARM_LIB/fit.awk" FILE). Input: one "X Y" a
# line, both above 0 (other lines are skipped). Output, one line:
#   exponent K line A B points N
# K is the slope of ln Y against ln X (Y grows as X^K: 1 linear, 2
# quadratic), A + B X the straight line through the points. With fewer
# than two distinct X, K, A and B are "nan".
# busybox's awk has no log() ("Math support is not compiled in"): ln()
# halves or doubles x into [1, 2), then sums the series of
# 2 atanh((x - 1) / (x + 1)).
function ln(x,  k, y, y2, s, t, i) {
	k = 0
	while (x >= 2) { x /= 2; k++ }
	while (x < 1) { x *= 2; k-- }
	y = (x - 1) / (x + 1); y2 = y * y; s = 0; t = y
	for (i = 1; i < 41; i += 2) { s += t / i; t *= y2 }
	return 2 * s + k * 0.6931471805599453
}
NF >= 2 && $1 + 0 > 0 && $2 + 0 > 0 {
	x = $1 + 0; y = $2 + 0; n++
	sx += x; sy += y; sxx += x * x; sxy += x * y
	lx = ln(x); ly = ln(y)
	tx += lx; ty += ly; txx += lx * lx; txy += lx * ly
}
END {
	d = n * sxx - sx * sx; e = n * txx - tx * tx
	if (n < 2 || d <= 0 || e <= 0) { printf "exponent nan line nan nan points %d\n", n; exit }
	b = (n * sxy - sx * sy) / d; a = (sy - b * sx) / n
	k = (n * txy - tx * ty) / e
	printf "exponent %.3f line %.6g %.6g points %d\n", k, a, b, n
}

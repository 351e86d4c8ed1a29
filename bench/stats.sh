# What the benchmark scripts share (sourced by bench/run.sh and
# bench/record.sh): the statistics of interleaved rounds.

# bench_stats BASE OTHER: "MEDIAN_BASE MEDIAN_OTHER MEDIAN_RATIO MIN MAX CPU_RATIO"
# from two files of "WALL USER SYS" lines, paired line by line.  Ratios are
# per pair (the runs of one round), then the median over rounds.
bench_stats() {
	paste -d ' ' "$1" "$2" | awk '
	function median(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		n++
		b[n] = $1; o[n] = $4; r[n] = $4 / $1
		c[n] = ($5 + $6) / ($2 + $3 > 0 ? $2 + $3 : 1e-9)
		if (n == 1 || r[n] < lo) lo = r[n]
		if (n == 1 || r[n] > hi) hi = r[n]
	}
	END {
		printf "%.3f %.3f %.3f %.3f %.3f %.3f\n", median(b, n),
		    median(o, n), median(r, n), lo, hi, median(c, n)
	}'
}

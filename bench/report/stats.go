package report

import (
	"slices"
	"time"
)

// Dist summarises durations in milliseconds: count, p50, p90, p99, max.
type Dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// DistOf is the Dist of ds (zero for none), to the microsecond.
func DistOf(ds []time.Duration) Dist {
	ms := Millis(ds)
	if len(ms) == 0 {
		return Dist{}
	}
	return Dist{N: len(ms), P50: Round(Percentile(ms, 0.5), 3), P90: Round(Percentile(ms, 0.9), 3),
		P99: Round(Percentile(ms, 0.99), 3), Max: Round(ms[len(ms)-1], 3)}
}

// Summary is a figure over repeated runs: count, median, min, max.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize is the Summary of v (zero for none), rounded to digits.
func Summarize(v []float64, digits int) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	return Summary{N: len(v), Median: Round(Median(v), digits), Min: Round(slices.Min(v), digits), Max: Round(slices.Max(v), digits)}
}

// Median of v, the lower middle for an even count; 0 for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

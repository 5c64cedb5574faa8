// Package percent reads and rounds the percentages of the usage beacons
// (diskusage, memusage) as Salt and psutil do.
package percent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// Threshold reads a threshold as Salt does, "63%", "63" or a number, and
// refuses one outside 0–100, which would fire always or never.
func Threshold(v any) (float64, error) {
	f, ok := py.Number(v)
	if s, isStr := v.(string); isStr {
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(s, "%", "")), 64); err != nil {
			return 0, fmt.Errorf("want a percentage such as 63%%, got %q", s)
		}
	} else if !ok {
		return 0, fmt.Errorf("want a percentage such as 63%%, got %v", v)
	}
	if !(f >= 0 && f <= 100) {
		return 0, fmt.Errorf("want a percentage from 0 to 100, got %v", v)
	}
	return f, nil
}

// Of is psutil's usage_percent(part, total, round_=1): part's share of
// total in percent, rounded to one decimal as Python's round(x, 1) does
// (the decimal nearest x's exact binary value, ties to even); 0 when
// total is 0.
func Of(part, total uint64) float64 {
	if total == 0 {
		return 0
	}
	x := float64(part) / float64(total) * 100
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 1, 64), 64)
	return r
}

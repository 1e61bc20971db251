package tui

import (
	"fmt"
	"strconv"
	"time"
)

// formatCount renders a count compactly: 950, 12.3k, 4.5M.
func formatCount(n float64) string {
	switch {
	case n < 0:
		return "-" + formatCount(-n)
	case n < 1000:
		if n != float64(int64(n)) && n < 10 {
			return strconv.FormatFloat(n, 'f', 1, 64)
		}
		return strconv.FormatInt(int64(n+0.5), 10)
	case n < 10_000:
		return strconv.FormatFloat(n/1000, 'f', 1, 64) + "k"
	case n < 1_000_000:
		return strconv.FormatInt(int64(n/1000+0.5), 10) + "k"
	case n < 10_000_000:
		return strconv.FormatFloat(n/1e6, 'f', 1, 64) + "M"
	case n < 1_000_000_000:
		return strconv.FormatInt(int64(n/1e6+0.5), 10) + "M"
	}
	return strconv.FormatFloat(n/1e9, 'f', 1, 64) + "G"
}

// formatBytes renders a byte count in decimal units: 512 B, 48.2 kB, 1.3 MB.
func formatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v >= 100 {
		return fmt.Sprintf("%.0f %cB", v, "kMGTP"[exp])
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGTP"[exp])
}

// formatDuration renders a processing time: 850µs, 12ms, 1.4s, 2m3s.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Microsecond:
		return "<1µs"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// formatOffset renders an offset; negative ones (unknown) as "-".
func formatOffset(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}

// formatMB renders bytes per second as MB/s.
func formatMB(bytesPerSec float64) string {
	return strconv.FormatFloat(bytesPerSec/1e6, 'f', 2, 64)
}

// plural renders "1 batch", "2 batches".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

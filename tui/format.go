package tui

import (
	"strconv"
	"time"

	krecord "github.com/kbatch-dev/kbatch/record"
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

// formatBytes renders a byte count as everything in kbatch does
// (record.FormatSize: 512 B, 26.4 KiB, 3.1 MiB).
func formatBytes(n int64) string { return krecord.FormatSize(n) }

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

// formatRate renders bytes per second in the units of formatBytes.
func formatRate(bytesPerSec float64) string { return formatBytes(int64(bytesPerSec+0.5)) + "/s" }

// plural renders "1 batch", "2 batches".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// sampleCount says how many of a batch's records are kept as samples:
// "5 of 8 records sampled", "1 of 1 record sampled" (a part of a whole is
// "N of M noun" on every screen: docs/screen.md).
func sampleCount(e *batchEntry) string {
	return strconv.Itoa(len(e.samples)) + " of " + plural(e.Records, "record", "records") + " sampled"
}

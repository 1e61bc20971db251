package replay

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressBar redraws one status line in place. Only Run's loop uses it.
type progressBar struct {
	w     io.Writer
	width int // terminal columns; the line stays shorter so it never wraps
	total int64
	start time.Time
	drawn bool
}

func (b *progressBar) draw(now time.Time, records, covered int64) {
	line := formatProgress(records, covered, b.total, now.Sub(b.start))
	if max := b.width - 1; max > 0 && len(line) > max {
		line = line[:max] // ASCII only
	}
	_, _ = io.WriteString(b.w, "\r"+line+"\x1b[K")
	b.drawn = true
}

// clear erases the line so the summary starts on a clean one.
func (b *progressBar) clear() {
	if b.drawn {
		_, _ = io.WriteString(b.w, "\r\x1b[K")
	}
}

// formatProgress renders the progress line, ASCII only and within 80
// columns: a bar over the offsets covered of the total span, records read,
// the record rate and the time left at the offset rate so far, e.g.
//
//	[#####-------]  45%  4,500/10.0k offsets  4,480 rec  2,240/s  ETA 2.4s
func formatProgress(records, covered, total int64, elapsed time.Duration) string {
	const width = 12
	frac := 1.0
	if total > 0 {
		frac = min(float64(covered)/float64(total), 1)
	}
	filled := int(frac * width)
	var b strings.Builder
	b.WriteString("[" + strings.Repeat("#", filled) + strings.Repeat("-", width-filled) + "]")
	fmt.Fprintf(&b, " %3d%%  %s/%s offsets  %s rec", int(frac*100), compact(covered), compact(total), compact(records))
	secs := elapsed.Seconds()
	if secs > 0 {
		fmt.Fprintf(&b, "  %s/s", compact(int64(float64(records)/secs)))
	}
	if covered > 0 && covered < total && secs > 0 {
		left := time.Duration(float64(total-covered) / (float64(covered) / secs) * float64(time.Second))
		b.WriteString("  ETA " + shortDuration(left))
	}
	return b.String()
}

// compact renders n in at most 6 characters: 9,999, 12.3k, 4.5M, 1.2G.
func compact(n int64) string {
	switch {
	case n < 10_000:
		return group(n)
	case n < 999_950:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 999_950_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fG", float64(n)/1e9)
}

// group renders n with thousands separators: 1234567 → "1,234,567".
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// shortDuration renders d rounded for people: 850ms, 12.3s, 4m05s, 2h10m.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

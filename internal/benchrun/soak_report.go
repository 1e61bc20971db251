package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// soakReport is the markdown summary of a soak: the figures the targets
// speak of, then the curves as text plots.
func soakReport(o soakOptions, samples []soakSample) string {
	var b strings.Builder
	ran := time.Duration(0)
	if len(samples) > 0 {
		ran = samples[len(samples)-1].at
	}
	fmt.Fprintf(&b, "Soak: kbatch TUI (140×40 tmux pane, watch --interval 1s) on %d records/s of %d B over %d partitions, live, for %s (of %s asked); a sample every %s.\n\n",
		o.rate, o.size, o.parts, roundMin(ran), o.duration, o.every)
	if len(samples) < 2 {
		b.WriteString("Too few samples to summarise.\n")
		return b.String()
	}
	last := samples[len(samples)-1]
	w := 0 // the first sample at or after the warm-up
	for w < len(samples)-1 && samples[w].at < o.warmup {
		w++
	}
	warm := samples[w]
	var minRSS, maxRSS int64 = math.MaxInt64, 0
	for _, s := range samples[w:] {
		minRSS, maxRSS = min(minRSS, s.rss), max(maxRSS, s.rss)
	}
	pct := func(v, ref int64) float64 { return 100 * float64(v-ref) / float64(ref) }
	cpuPct := func(a, z soakSample) float64 {
		return 100 * (z.cpu - a.cpu).Seconds() / (z.at - a.at).Seconds()
	}
	var peakCPU float64
	for i := 1; i < len(samples); i++ {
		peakCPU = max(peakCPU, cpuPct(samples[i-1], samples[i]))
	}
	maxG := 0
	for _, s := range samples {
		maxG = max(maxG, s.goroutines)
	}
	var loads []float64
	for _, s := range samples {
		if v, err := strconv.ParseFloat(s.load1, 64); err == nil {
			loads = append(loads, v)
		}
	}
	slices.Sort(loads)
	b.WriteString("| figure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| RSS at %s (first sample after the warm-up) | %.1f MiB |\n", roundMin(warm.at), mib(warm.rss))
	fmt.Fprintf(&b, "| RSS at the end (%s) | %.1f MiB (%+.1f %%) |\n", roundMin(last.at), mib(last.rss), pct(last.rss, warm.rss))
	fmt.Fprintf(&b, "| RSS range after the warm-up | %.1f–%.1f MiB (%+.1f %% / %+.1f %% of the warm-up value) |\n",
		mib(minRSS), mib(maxRSS), pct(minRSS, warm.rss), pct(maxRSS, warm.rss))
	if warm.store >= 0 && last.store >= 0 {
		// bbolt maps the store: the pages of its batch log read so far
		// count in RSS, and the log grows up to its cap (offsets.Store).
		fmt.Fprintf(&b, "| of which the process's own (RssAnon) / its binary's pages / the offset store's mapped pages: at %s → end | %.1f / %.1f / %.1f → %.1f / %.1f / %.1f MiB |\n",
			roundMin(warm.at), mib(warm.anon), mib(warm.file-warm.store), mib(warm.store), mib(last.anon), mib(last.file-last.store), mib(last.store))
		lo, hi := int64(math.MaxInt64), int64(0)
		for _, s := range samples {
			if s.at >= warm.at && s.store >= 0 {
				lo, hi = min(lo, s.rss-s.store), max(hi, s.rss-s.store)
			}
		}
		base := warm.rss - warm.store
		fmt.Fprintf(&b, "| RSS without the store's pages: at %s → end; range after the warm-up | %.1f → %.1f MiB (%+.1f %%); %.1f–%.1f MiB (%+.1f %% / %+.1f %%) |\n",
			roundMin(warm.at), mib(base), mib(last.rss-last.store), pct(last.rss-last.store, base), mib(lo), mib(hi), pct(lo, base), pct(hi, base))
	} else {
		fmt.Fprintf(&b, "| of which the process's own (RssAnon) / its binary's pages (RssFile): at %s → end | %.1f / %.1f → %.1f / %.1f MiB |\n",
			roundMin(warm.at), mib(warm.anon), mib(warm.file), mib(last.anon), mib(last.file))
	}
	if warm.heap >= 0 && last.heap >= 0 {
		fmt.Fprintf(&b, "| Go heap in use (HeapInuse): at %s → end | %.1f → %.1f MiB |\n", roundMin(warm.at), mib(warm.heap), mib(last.heap))
	}
	fmt.Fprintf(&b, "| CPU, whole run | %.2f %% of one core (%.1f s in %s) |\n", cpuPct(soakSample{}, last), last.cpu.Seconds(), roundMin(last.at))
	fmt.Fprintf(&b, "| CPU after the warm-up | %.2f %% of one core |\n", cpuPct(warm, last))
	fmt.Fprintf(&b, "| CPU, busiest %s interval | %.1f %% of one core |\n", o.every, peakCPU)
	fmt.Fprintf(&b, "| goroutines: first sample / after warm-up / end / max | %d / %d / %d / %d |\n",
		samples[0].goroutines, warm.goroutines, last.goroutines, maxG)
	fmt.Fprintf(&b, "| records acked (TUI header) / produced at the end | %d / %d |\n", last.acked, last.produced)
	if len(loads) > 0 {
		fmt.Fprintf(&b, "| machine load average (1 min): min / median / max | %.2f / %.2f / %.2f |\n",
			loads[0], loads[len(loads)/2], loads[len(loads)-1])
	}
	b.WriteString("\n")
	xs := make([]float64, len(samples))
	rss := make([]float64, len(samples))
	gor := make([]float64, len(samples))
	cpu := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = s.at.Minutes()
		rss[i] = mib(s.rss)
		gor[i] = float64(s.goroutines)
		if i > 0 {
			cpu[i] = cpuPct(samples[i-1], s)
		}
	}
	b.WriteString("```\n")
	b.WriteString(textPlot("RSS (MiB) over minutes", xs, rss, 72, 12, 0))
	b.WriteString("\n")
	b.WriteString(textPlot(fmt.Sprintf("CPU (%% of one core, per %s) over minutes", o.every), xs[1:], cpu[1:], 72, 8, 0))
	b.WriteString("\n")
	b.WriteString(textPlot("goroutines over minutes", xs, gor, 72, 6, 0))
	b.WriteString("```\n")
	return b.String()
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func roundMin(d time.Duration) string { return d.Round(time.Second).String() }

// textPlot draws ys over xs in a width×height grid of characters, each
// column the mean of the samples that fall in it, with the y axis from
// yMin (or below, if a value is lower) to the highest value.
func textPlot(title string, xs, ys []float64, width, height int, yMin float64) string {
	if len(xs) == 0 {
		return title + ": no samples\n"
	}
	lo, hi := yMin, ys[0]
	for _, y := range ys {
		lo, hi = min(lo, y), max(hi, y)
	}
	if hi <= lo {
		hi = lo + 1
	}
	x0, x1 := xs[0], xs[len(xs)-1]
	if x1 <= x0 {
		x1 = x0 + 1
	}
	sum := make([]float64, width)
	n := make([]int, width)
	for i, x := range xs {
		c := min(width-1, int((x-x0)/(x1-x0)*float64(width)))
		sum[c] += ys[i]
		n[c]++
	}
	grid := make([][]byte, height)
	for r := range grid {
		grid[r] = []byte(strings.Repeat(" ", width))
	}
	for c := range width {
		if n[c] == 0 {
			continue
		}
		y := sum[c] / float64(n[c])
		r := int(math.Round((y - lo) / (hi - lo) * float64(height-1)))
		grid[height-1-r][c] = '*'
	}
	var b strings.Builder
	b.WriteString(title + "\n")
	for r, row := range grid {
		label := ""
		switch r {
		case 0:
			label = fmtAxis(hi)
		case height - 1:
			label = fmtAxis(lo)
		case (height - 1) / 2:
			label = fmtAxis((hi + lo) / 2)
		}
		fmt.Fprintf(&b, "%8s |%s\n", label, strings.TrimRight(string(row), " "))
	}
	fmt.Fprintf(&b, "%8s +%s\n", "", strings.Repeat("-", width))
	left, right := fmtAxis(x0), fmtAxis(x1)
	fmt.Fprintf(&b, "%8s  %s%s%s min\n", "", left, strings.Repeat(" ", max(1, width-len(left)-len(right))), right)
	return b.String()
}

func fmtAxis(v float64) string {
	if math.Abs(v) >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

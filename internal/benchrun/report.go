package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// printReport prints the machine, one table per data set and the targets
// with what was measured, as Markdown.
func printReport(o options, sets []*dataSet, gb goBench) {
	fmt.Printf("\n## kbatch benchmarks\n\n%s; %s; best and median of %d rounds\n", machine(), o.brokerLabel, o.rounds)
	for _, d := range sets {
		fmt.Printf("\n### %s\n\n", d.title)
		fmt.Println("| contender | best s | median s | records/s | first batch s | CPU s | peak RSS MiB | ListOffsets / Metadata / Fetch requests | ratio: best (median) |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---|")
		for _, r := range d.results {
			b, ok := r.best()
			if !ok {
				fmt.Printf("| %s | error: %v |||||||\n", r.name, r.firstErr())
				continue
			}
			first := ""
			if b.first > 0 {
				first = fmt.Sprintf("%.2f", r.median(func(s sample) time.Duration { return s.first }).Seconds())
			}
			reqs := ""
			if r.counts != nil {
				reqs = fmt.Sprintf("%d / %d / %d", r.counts.listOffsets, r.counts.metadata, r.counts.fetch)
			}
			fmt.Printf("| %s | %.2f | %.2f | %s | %s | %.2f | %.0f | %s | %s |\n", r.name, b.done.Seconds(),
				r.median(func(s sample) time.Duration { return s.done }).Seconds(),
				thousands(int64(float64(d.records)/b.done.Seconds())), first,
				r.median(func(s sample) time.Duration { return s.cpu }).Seconds(), float64(r.maxRSS())/1024, reqs, ratios(d, r.name))
		}
	}
	printMatrix(sets)
	fmt.Printf("\n### Targets\n\n| target | goal | measured |\n|---|---|---|\n")
	for _, d := range sets {
		if d.shape != "" || d.wide > 0 {
			continue
		}
		n := thousands(d.records)
		row(fmt.Sprintf("watch --no-tui --sink /dev/null vs bare sarama, %s", n), "≥ 0.9×", ratio(d, "kbatch", "sarama"))
		row(fmt.Sprintf("the same vs bare kgo, %s", n), "≥ 0.8×", ratio(d, "kbatch", "kgo"))
		row(fmt.Sprintf("replay vs kcat -J, %s", n), "≥ 3×", ratio(d, "replay", "kcat"))
		row(fmt.Sprintf("replay vs kcat -J with bigger fetches, %s", n), "≥ 1.5×", ratio(d, "replay", "kcat-tuned"))
		row(fmt.Sprintf("TUI (tmux 140×40) vs headless, %s", n), "≥ 0.95×", ratio(d, "kbatch-tui", "kbatch-raw"))
		row(fmt.Sprintf("peak RSS headless / TUI / headless without the 64 MiB soft limit (GOMEMLIMIT=off), %s", n), "≤ 64 MiB",
			rss(d, "kbatch")+" / "+rss(d, "kbatch-tui")+" / "+rss(d, "kbatch-nolimit"))
		if d.get("kbatch-tui-decode") != nil {
			row(fmt.Sprintf("TUI decoding %s (registry) vs the same TUI without, %s", o.values, n), "≥ 0.95×", ratio(d, "kbatch-tui-decode", "kbatch-tui"))
		}
		if d.get("replay-decode") != nil {
			row(fmt.Sprintf("replay --decode %s vs replay, %s", o.values, n), "(report)", ratio(d, "replay-decode", "replay"))
		}
	}
	for _, d := range sets {
		if d.wide == 0 {
			continue
		}
		first := func(name string) string {
			r := d.get(name)
			if r == nil || len(r.ok()) == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f s", r.median(func(s sample) time.Duration { return s.first }).Seconds())
		}
		row(fmt.Sprintf("%d partitions: start to first batch, headless / on screen (median)", d.wide), "≤ 1 s", first("kbatch")+" / "+first("kbatch-tui"))
		if r := d.get("kbatch"); r != nil && r.counts != nil {
			row(fmt.Sprintf("%d partitions: ListOffsets / Metadata requests, whole run", d.wide), "one per broker, not per partition",
				fmt.Sprintf("%d / %d", r.counts.listOffsets, r.counts.metadata))
		}
	}
	for _, v := range gb.views {
		what := fmt.Sprintf("View() 140×40, %s partitions, full history (%s)", v.parts, v.name)
		if v.err != nil {
			row(what, "≤ 2 ms", "error: "+v.err.Error())
		} else {
			row(what, "≤ 2 ms", fmt.Sprintf("%.2f ms", v.ns/1e6))
		}
	}
	if gb.storeTmp != "" {
		row("store per batch, 1000 partitions, median/p90/max µs: back to back (AckAndPlan) · alone (Plan+Ack), "+gb.tmpDir, "one transaction, ≤ 5 ms median", storeBoth(gb.storeTmp))
	}
	if gb.storeRepo != "" {
		row("the same on the repository's disk ("+gb.repo+")", "≤ 5 ms median", storeBoth(gb.storeRepo))
	}
	fmt.Println()
}

func row(what, goal, got string) { fmt.Printf("| %s | %s | %s |\n", what, goal, got) }

// storeBoth formats a benchrun store line: the back-to-back transaction,
// then a batch alone (both, plan, ack).
func storeBoth(line string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "both="); ok {
			return field(line, "merged=") + " · " + v + " (plan " + field(line, "plan=") + ", ack " + field(line, "ack=") + ")"
		}
	}
	return line
}

func field(line, prefix string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, prefix); ok {
			return v
		}
	}
	return "?"
}

// ratios is the ratio column of a row.
func ratios(d *dataSet, name string) string {
	var out []string
	add := func(other string) {
		if r := ratio(d, name, other); r != "–" {
			out = append(out, r+" "+other)
		}
	}
	switch name {
	case "kbatch":
		add("sarama")
		add("kgo")
		add("kbatch-base")
	case "kbatch-nolimit":
		add("kbatch-base-nolimit")
	case "kbatch-tui":
		add("kbatch-raw")
	case "replay":
		add("kcat")
		add("kcat-tuned")
		add("sarama")
	}
	return strings.Join(out, " · ")
}

// ratio is how fast a is next to b (b's time over a's): of the best times,
// and (in parentheses) the median of the rounds' own ratios, each round's
// two runs having shared the machine's state of the moment.
func ratio(d *dataSet, a, b string) string {
	ra, rb := d.get(a), d.get(b)
	if ra == nil || rb == nil {
		return "–"
	}
	ba, okA := ra.best()
	bb, okB := rb.best()
	if !okA || !okB {
		return "–"
	}
	med, ok := medianRatio(d, a, b)
	if !ok {
		return fmt.Sprintf("%.2f× (–)", bb.done.Seconds()/ba.done.Seconds())
	}
	return fmt.Sprintf("%.2f× (%.2f×)", bb.done.Seconds()/ba.done.Seconds(), med)
}

func rss(d *dataSet, name string) string {
	r := d.get(name)
	if r == nil || len(r.ok()) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB", float64(r.maxRSS())/1024)
}

// machine describes where the run happened.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = fmt.Sprintf("; load average %s %s %s at the end", f[0], f[1], f[2])
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s %s/%s%s", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}

// printMatrix is the data-shape matrix: one line per data
// set, the ratios its targets speak of, each marked when it misses.
func printMatrix(sets []*dataSet) {
	fmt.Printf("\n### Data-shape matrix\n\nRatios of best times (median of the rounds' own ratios); above 1 means kbatch is faster; ✗ marks a miss of the target in the heading (on the median).\n\n")
	fmt.Println("| data set | watch vs kgo (≥ 0.8×) | watch vs sarama | replay vs kcat -J (≥ 3×) | replay vs kcat-tuned (≥ 1.5×) | TUI vs headless twin (≥ 0.95×) | watch records/s | CPU s (median) watch / kgo / replay / kcat-tuned | peak RSS watch / TUI MiB |")
	fmt.Println("|---|---|---|---|---|---|---:|---|---|")
	for _, d := range sets {
		if d.wide > 0 {
			continue
		}
		mark := func(a, b string, goal float64) string {
			r := ratio(d, a, b)
			if med, ok := medianRatio(d, a, b); ok && med < goal {
				r += " ✗"
			}
			return r
		}
		rate := "–"
		if r := d.get("kbatch"); r != nil {
			if b, ok := r.best(); ok {
				rate = thousands(int64(float64(d.records) / b.done.Seconds()))
			}
		}
		mibOf := func(name string) string {
			if r := d.get(name); r != nil && len(r.ok()) > 0 {
				return fmt.Sprintf("%.0f", float64(r.maxRSS())/1024)
			}
			return "–"
		}
		cpuOf := func(name string) string {
			if r := d.get(name); r != nil && len(r.ok()) > 0 {
				return fmt.Sprintf("%.2f", r.median(func(s sample) time.Duration { return s.cpu }).Seconds())
			}
			return "–"
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s | %s / %s |\n", d.title, mark("kbatch", "kgo", 0.8), ratio(d, "kbatch", "sarama"),
			mark("replay", "kcat", 3), mark("replay", "kcat-tuned", 1.5), mark("kbatch-tui", "kbatch-raw", 0.95), rate,
			cpuOf("kbatch"), cpuOf("kgo"), cpuOf("replay"), cpuOf("kcat-tuned"), mibOf("kbatch"), mibOf("kbatch-tui"))
	}
}

// medianRatio is the median of the rounds' own ratios of b's time over a's.
func medianRatio(d *dataSet, a, b string) (float64, bool) {
	ra, rb := d.get(a), d.get(b)
	if ra == nil || rb == nil {
		return 0, false
	}
	var rounds []float64
	for i := range min(len(ra.samples), len(rb.samples)) {
		sa, sb := ra.samples[i], rb.samples[i]
		if sa.err == nil && sb.err == nil && sa.done > 0 {
			rounds = append(rounds, sb.done.Seconds()/sa.done.Seconds())
		}
	}
	if len(rounds) == 0 {
		return 0, false
	}
	slices.Sort(rounds)
	if n := len(rounds); n%2 == 0 {
		return (rounds[n/2-1] + rounds[n/2]) / 2, true
	}
	return rounds[len(rounds)/2], true
}

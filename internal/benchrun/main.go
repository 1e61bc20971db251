// Command benchrun measures kbatch against bare clients and kcat on the
// same data in the same run, so machine noise cancels out in the ratios,
// and prints the table of BENCHMARKS.md.
//
//	go run ./internal/benchrun -records 1000000,3000000 -kbatch bin/kbatch
//
// It starts a kfake broker in a process of its own ("benchrun broker"), or
// uses -brokers / KBATCH_TEST_BROKERS, fills a topic per data set, then
// runs every contender as its own process, round after round in a
// rotating order, and keeps the best and the median time of each:
//
//	sarama      a bare sarama partition-consumer loop
//	kgo         a bare franz-go loop
//	kbatch      watch --no-tui --until-end --sink /dev/null, store on
//	kbatch-raw  watch --no-tui --interval 100ms, store on, no sink (the
//	            TUI row's twin), stopped once every record is acked
//	kbatch-tui  watch --interval 100ms with the TUI in a 140×40 tmux
//	            pane, store on
//	replay      kbatch replay T:*:earliest-latest --out /dev/null
//	kbatch-tui-decode, replay-decode
//	            the same with the registry of -values avro|protobuf|
//	            jsonschema (the screen decodes; replay --decode)
//	kcat        kcat -C -e -J -o beginning
//	kcat-tuned  the same with -X fetch.message.max.bytes=4194304
//	            -X queued.min.messages=1000000 (librdkafka's defaults
//	            fetch 1 MiB per partition and leave kcat mostly waiting)
//
// A contender's time runs from starting its process to the moment it has
// every record (see BENCHMARKS.md): the bare loops print "done" then;
// kbatch's last batch line or the TUI's header says every record is acked;
// replay and kcat are timed to their exit. Peak RSS is the process's own
// VmHWM; CPU is user+system time.
//
// Subcommands used by the run, also handy alone: "loop", "broker",
// "store", "serve" (a filled broker for experiments) and "profile" (the
// headless stream in-process under pprof).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "loop":
			os.Exit(loopMain(os.Args[2:]))
		case "broker":
			os.Exit(brokerMain())
		case "profile":
			os.Exit(profileMain(os.Args[2:]))
		case "store":
			os.Exit(storeMain(os.Args[2:]))
		case "serve":
			os.Exit(serveMain(os.Args[2:]))
		case "soak":
			os.Exit(soakMain(os.Args[2:]))
		case "soak-traffic":
			os.Exit(soakTrafficMain(os.Args[2:]))
		}
	}
	var o options
	flag.StringVar(&o.records, "records", "1000000", "data sets: records to produce, comma-separated (e.g. 1000000,3000000; 0 or empty: none)")
	flag.IntVar(&o.size, "size", 200, "value size in bytes")
	flag.IntVar(&o.partitions, "partitions", 3, "partitions of each data set's topic")
	flag.StringVar(&o.wide, "wide", "1000,10000", "partitions of the many-partition topics, comma-separated (0 or empty: none)")
	flag.StringVar(&o.matrix, "matrix", "all", "data-shape rows to run: all, none, or names (bin200,avro1k,tiny16,text10k,bin1m,headers10,none,gzip,lz4,zstd,small-batches,hot)")
	flag.IntVar(&o.matrixMB, "matrix-mb", defaultMatrixMB, "MiB of values per data-shape row")
	flag.IntVar(&o.matrixMax, "matrix-max-records", defaultMatrixMax, "at most this many records per data-shape row")
	flag.IntVar(&o.wideRecords, "wide-records", 200_000, "records on the many-partition topic")
	flag.StringVar(&o.brokers, "brokers", os.Getenv("KBATCH_TEST_BROKERS"), "use this cluster instead of a kfake broker")
	flag.StringVar(&o.kbatch, "kbatch", "bin/kbatch", "kbatch binary")
	flag.StringVar(&o.kbatchBase, "kbatch-base", "", "another kbatch binary (the code before a change) for the contenders kbatch-base and kbatch-base-nolimit, which run it as kbatch and kbatch-nolimit run -kbatch: before and after in one run")
	flag.StringVar(&o.only, "only", "sarama,kgo,kbatch,kbatch-nolimit,kbatch-raw,kbatch-tui,replay,kcat,kcat-tuned", "contenders to run, comma-separated (kbatch-nolimit runs on the -records rows only)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; the best and the median of each contender are kept")
	flag.BoolVar(&o.gobench, "gobench", true, "also run BenchmarkView140x40 (go test) and time the store per batch")
	flag.StringVar(&o.values, "values", "json", "the -records data sets' values: json, or avro, protobuf, jsonschema in the Confluent wire format with an in-process registry (for the *-decode contenders)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

type options struct {
	records                string
	kbatchBase             string
	size, partitions       int
	wide                   string
	wideRecords            int
	matrix                 string
	matrixMB, matrixMax    int
	brokers, kbatch, only  string
	rounds                 int
	gobench                bool
	values                 string
	schemas                *schemaValues
	self, tmp, brokerLabel string
	seeds                  string
	broker                 *broker
}

// result is every sample of one contender on one data set.
type result struct {
	name    string
	samples []sample
	counts  *requestCounts // requests the broker served in the last run
}

func (r *result) ok() []sample {
	var out []sample
	for _, s := range r.samples {
		if s.err == nil {
			out = append(out, s)
		}
	}
	return out
}

// best is the fastest successful sample (by done).
func (r *result) best() (sample, bool) {
	ok := r.ok()
	if len(ok) == 0 {
		return sample{}, false
	}
	return slices.MinFunc(ok, func(a, b sample) int { return int(a.done - b.done) }), true
}

func (r *result) median(f func(sample) time.Duration) time.Duration {
	var v []time.Duration
	for _, s := range r.ok() {
		v = append(v, f(s))
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

func (r *result) maxRSS() int64 {
	var m int64
	for _, s := range r.ok() {
		m = max(m, s.rss)
	}
	return m
}

func (r *result) firstErr() error {
	for _, s := range r.samples {
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

// dataSet is one topic and what ran on it.
type dataSet struct {
	title   string
	records int64
	results []*result
	// shape is the matrix row's name ("" for the -records rows); wide
	// the partitions of a many-partition set (0 for the others).
	shape string
	wide  int
}

func (d *dataSet) get(name string) *result {
	for _, r := range d.results {
		if r.name == name {
			return r
		}
	}
	return nil
}

func run(o options) error {
	var err error
	if o.self, err = os.Executable(); err != nil {
		return err
	}
	if o.tmp, err = os.MkdirTemp("", "kbatch-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(o.tmp)
	o.brokerLabel = "given cluster " + o.brokers
	if o.brokers == "" {
		if o.broker, err = startBroker(o.self); err != nil {
			return err
		}
		defer o.broker.stop()
		o.brokers = o.broker.addrs
		o.brokerLabel = "kfake broker in its own process"
	}
	o.seeds = o.brokers
	if o.schemas, err = newSchemaValues(o.values); err != nil {
		return err
	}
	if o.schemas != nil {
		defer o.schemas.close()
	}
	only := strings.Split(o.only, ",")
	rows, err := pickShapes(o.matrix)
	if err != nil {
		return err
	}
	var sets []*dataSet
	for _, f := range strings.Split(o.records, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if f == "" || (err == nil && n == 0) {
			continue // as -wide: 0 or nothing is no such data set (only the matrix)
		}
		if err != nil || n < 0 {
			return fmt.Errorf("bad -records %q", o.records)
		}
		d, err := runSet(o, "bench", n, int32(o.partitions), o.schemas.shape(textShape(o.size, false)), only)
		if err != nil {
			return err
		}
		sets = append(sets, d)
	}
	// kbatch-nolimit (the soft memory limit off) only on the -records rows.
	matrixOnly := slices.DeleteFunc(slices.Clone(only), func(s string) bool { return s == "kbatch-nolimit" || s == "kbatch-base-nolimit" })
	for _, sh := range rows {
		d, err := runSet(o, "bench-"+sh.name, matrixRecords(sh, o.matrixMB, o.matrixMax), int32(o.partitions), sh, matrixOnly)
		if err != nil {
			return err
		}
		d.shape = sh.name
		sets = append(sets, d)
	}
	for _, f := range strings.Split(o.wide, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if f == "" || (err == nil && w == 0) {
			continue
		}
		if err != nil || w < 0 {
			return fmt.Errorf("bad -wide %q", o.wide)
		}
		wideOnly := slices.DeleteFunc(slices.Clone(matrixOnly), func(s string) bool { return s == "kbatch-raw" || strings.HasPrefix(s, "kcat") })
		d, err := runSet(o, "wide", o.wideRecords, int32(w), textShape(o.size, false), wideOnly)
		if err != nil {
			return err
		}
		d.wide = w
		sets = append(sets, d)
	}
	var gb goBench
	if o.gobench {
		gb = runGoBench()
	}
	printReport(o, sets, gb)
	return nil
}

// runSet fills a topic with n records of shape sh and runs the
// contenders on it; the topic is deleted afterwards, so the broker holds
// one data set at a time.
func runSet(o options, prefix string, n int, parts int32, sh shape, only []string) (*dataSet, error) {
	topic, err := fillShape(strings.Split(o.seeds, ","), prefix, n, parts, sh)
	if err != nil {
		return nil, err
	}
	defer deleteTopics(strings.Split(o.seeds, ","), &[]string{topic})
	d := &dataSet{records: int64(n), title: fmt.Sprintf("%s records of %s on %d partitions", thousands(int64(n)), sh.title, parts)}
	for _, name := range only {
		if strings.HasPrefix(name, "kcat") {
			if _, err := exec.LookPath("kcat"); err != nil {
				fmt.Fprintln(os.Stderr, "  kcat not installed (apt-get install kcat): skipped")
				continue
			}
		}
		if name == "kbatch-tui" {
			if _, err := exec.LookPath("tmux"); err != nil {
				fmt.Fprintln(os.Stderr, "  tmux not installed: kbatch-tui skipped")
				continue
			}
		}
		d.results = append(d.results, &result{name: name})
	}
	for round := 0; round < o.rounds; round++ {
		for i := range d.results {
			// Rotate the order each round so no contender always runs
			// right after the fill or after the same neighbour.
			r := d.results[(i+round)%len(d.results)]
			if o.broker != nil {
				_ = o.broker.reset()
			}
			s := runOne(o, r.name, topic, int64(n), fmt.Sprintf("%s-%d-%d", prefix, round, i))
			if o.broker != nil {
				if c, err := o.broker.counts(); err == nil {
					r.counts = &c
				}
			}
			r.samples = append(r.samples, s)
			status := fmt.Sprintf("%6.2fs", s.done.Seconds())
			if s.first > 0 {
				status += fmt.Sprintf(" (first batch %.2fs)", s.first.Seconds())
			}
			if s.err != nil {
				status = "error: " + s.err.Error()
			}
			fmt.Fprintf(os.Stderr, "  %s round %d %-10s %s  cpu %.2fs  rss %.0f MiB\n", prefix, round+1, r.name, status, s.cpu.Seconds(), float64(s.rss)/1024)
		}
	}
	return d, nil
}

// tuiInterval is the batch interval of the TUI row and its headless
// twin: short, so the wait for the last partial batch hardly counts.
const tuiInterval = "100ms"

// batchLine is what benchrun reads of kbatch's headless output.
type batchLine struct {
	Type    string `json:"type"`
	Records int64  `json:"records"`
}

// kbatchDone is done when the acked batches hold n records; first is the
// first batch line.
func kbatchDone(n int64) lineWatch {
	var total int64
	return func(line []byte, at time.Duration, s *sample) bool {
		var l batchLine
		if json.Unmarshal(line, &l) != nil || l.Type != "batch" {
			return false
		}
		if s.first == 0 {
			s.first = at
		}
		total += l.Records
		return total >= n
	}
}

// loopDone is done when a bare loop prints "done".
func loopDone(line []byte, _ time.Duration, _ *sample) bool {
	return strings.HasPrefix(string(line), "done ")
}

func runOne(o options, name, topic string, n int64, tag string) sample {
	store := filepath.Join(o.tmp, tag+".db")
	watch := []string{"watch", "-b", o.seeds, "-t", topic, "--reset", "earliest", "--store", store}
	switch name {
	case "sarama", "kgo":
		return measure(exec.Command(o.self, "loop", name, o.seeds, topic), loopDone)
	case "kbatch":
		return measure(exec.Command(o.kbatch, append(watch, "--no-tui", "--until-end", "--sink", os.DevNull)...), kbatchDone(n))
	case "kbatch-base", "kbatch-base-nolimit":
		if o.kbatchBase == "" {
			return sample{err: fmt.Errorf("%s needs -kbatch-base", name)}
		}
		cmd := exec.Command(o.kbatchBase, append(watch, "--no-tui", "--until-end", "--sink", os.DevNull)...)
		if name == "kbatch-base-nolimit" {
			cmd.Env = append(os.Environ(), "GOMEMLIMIT=off")
		}
		return measure(cmd, kbatchDone(n))
	case "kbatch-nolimit":
		// kbatch without its 64 MiB soft heap limit (main.go sets it
		// only when GOMEMLIMIT is unset): what the limit hides.
		cmd := exec.Command(o.kbatch, append(watch, "--no-tui", "--until-end", "--sink", os.DevNull)...)
		cmd.Env = append(os.Environ(), "GOMEMLIMIT=off")
		return measure(cmd, kbatchDone(n))
	case "kbatch-raw":
		// The TUI has no --until-end: its last, partial batch is cut by
		// the interval. So is this one's, and it is stopped once done.
		cmd := exec.Command(o.kbatch, append(watch, "--no-tui", "--interval", tuiInterval)...)
		return measureUntil(cmd, kbatchDone(n))
	case "kbatch-tui":
		return tuiRun(o.kbatch, append(watch, "--interval", tuiInterval), n, store, topic)
	case "kbatch-tui-decode":
		if o.schemas == nil {
			return sample{err: fmt.Errorf("%s needs -values avro, protobuf or jsonschema", name)}
		}
		return tuiRun(o.kbatch, append(watch, "--interval", tuiInterval, "--registry", o.schemas.url()), n, store, topic)
	case "replay-decode":
		if o.schemas == nil {
			return sample{err: fmt.Errorf("%s needs -values avro, protobuf or jsonschema", name)}
		}
		asked := o.schemas.requests()
		s := measure(exec.Command(o.kbatch, "replay", topic+":*:earliest-latest", "-b", o.seeds, "--out", os.DevNull,
			"--decode", "--registry", o.schemas.url(), "--store", store), nil)
		return checkDecoded(s, o.schemas.requests()-asked)

	case "replay":
		return measure(exec.Command(o.kbatch, "replay", topic+":*:earliest-latest", "-b", o.seeds, "--out", os.DevNull), nil)
	case "kcat":
		return measure(exec.Command("kcat", "-C", "-b", o.seeds, "-t", topic, "-o", "beginning", "-e", "-J", "-q"), nil)
	case "kcat-tuned":
		return measure(exec.Command("kcat", "-C", "-b", o.seeds, "-t", topic, "-o", "beginning", "-e", "-J", "-q",
			"-X", "fetch.message.max.bytes=4194304", "-X", "queued.min.messages=1000000"), nil)
	}
	return sample{err: fmt.Errorf("unknown contender %q", name)}
}

// goBench holds the in-process measurements.
type goBench struct {
	views        []viewBench
	storeTmp     string // benchrun store in the temp folder
	storeRepo    string // and on the repository's disk
	tmpDir, repo string
}

// viewBench is one View() benchmark of tui/.
type viewBench struct {
	name, parts string
	ns          float64 // ns/op
	err         error
}

func runGoBench() goBench {
	var g goBench
	for _, v := range []viewBench{{name: "BenchmarkView140x40", parts: "1000"}, {name: "BenchmarkView140x40Partitions10k", parts: "10,000"}} {
		out, err := exec.Command("go", "test", "-run", "^$", "-bench", "^"+v.name+"$", "-benchtime", "300x", "./tui/").CombinedOutput()
		re := regexp.MustCompile(v.name + `-?\d*\s+\d+\s+([0-9.]+) ns/op`)
		if m := re.FindSubmatch(out); m != nil {
			v.ns, _ = strconv.ParseFloat(string(m[1]), 64)
		} else {
			v.err = fmt.Errorf("%v: %s", err, lastLine(string(out)))
		}
		g.views = append(g.views, v)
	}
	self, _ := os.Executable()
	g.tmpDir = os.TempDir()
	if out, err := exec.Command(self, "store", "-dir", g.tmpDir).Output(); err == nil {
		g.storeTmp = strings.TrimSpace(string(out))
	}
	if wd, err := os.Getwd(); err == nil {
		g.repo = filepath.Join(wd, ".cache", "bench")
		if out, err := exec.Command(self, "store", "-dir", g.repo).Output(); err == nil {
			g.storeRepo = strings.TrimSpace(string(out))
		}
	}
	return g
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// soakTrafficMain is "benchrun soak-traffic": a kfake broker with one
// topic of -partitions partitions and a producer writing -rate records of
// -size bytes per second to it, round-robin, in small batches as a live
// producer does (linger 5ms). The topic keeps -retention of records
// (kfake applies retention.ms every 10s), so an hour of traffic does not
// pile up in the broker's memory. It prints "BROKERS TOPIC" on stdout,
// then answers "count" on stdin with the records produced so far, until
// stdin closes. It runs in a process of its own so that neither the
// broker nor the producer is counted in kbatch's CPU or memory.
func soakTrafficMain(args []string) int {
	fs := flag.NewFlagSet("soak-traffic", flag.ExitOnError)
	parts := fs.Int("partitions", 50, "partitions")
	rate := fs.Int("rate", 5000, "records per second")
	size := fs.Int("size", 200, "value size in bytes")
	// 30 s was too short on a starved machine: records that waited
	// that long in the producer's buffer arrived already expired.
	retention := fs.Duration("retention", 2*time.Minute, "how long the broker keeps records")
	_ = fs.Parse(args)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "benchrun soak-traffic:", err)
		return 1
	}
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return fail(err)
	}
	defer fake.Close()
	seeds := fake.ListenAddrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	topic := fmt.Sprintf("soak-%d", time.Now().UnixNano())
	ret := strconv.FormatInt(retention.Milliseconds(), 10)
	adm := kadm.NewClient(cl)
	// Retention drops whole segments only: small ones keep the broker's
	// memory at about -retention of records (kfake's default segment of
	// 100 MiB per partition would hold 5 GiB over 50 partitions).
	seg := strconv.Itoa(1 << 20)
	resp, err := adm.CreateTopic(ctx, int32(*parts), 1, map[string]*string{"retention.ms": &ret, "segment.bytes": &seg}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fail(fmt.Errorf("create topic %s: %w", topic, err))
	}
	if err := waitLeaders(ctx, adm, topic, int32(*parts)); err != nil {
		return fail(err)
	}
	go func() {
		// kfake applies retention.ms only when asked to.
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fake.ApplyRetention()
			}
		}
	}()
	var produced, failed atomic.Int64
	go func() {
		// Every 10ms, the records due by now: a steady rate, not bursts.
		rng := rand.New(rand.NewPCG(3, 4))
		const tick = 10 * time.Millisecond
		t := time.NewTicker(tick)
		defer t.Stop()
		start := time.Now()
		var sent int64
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				due := int64(now.Sub(start).Seconds() * float64(*rate))
				for ; sent < due; sent++ {
					r := &kgo.Record{Topic: topic, Key: []byte("sensor-" + strconv.Itoa(int(sent%500))), Value: value(rng, int(sent), *size)}
					cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
						if err != nil {
							failed.Add(1)
							return
						}
						produced.Add(1)
					})
				}
			}
		}
	}()
	fmt.Println(strings.Join(seeds, ","), topic)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "count" {
			fmt.Printf("produced=%d failed=%d\n", produced.Load(), failed.Load())
		}
	}
	return 0
}

// soakMain is "benchrun soak": live traffic from "benchrun soak-traffic"
// (its own process) and the kbatch TUI on it in a 140×40 tmux pane, for
// -duration. Every -every it samples the kbatch process: resident memory
// (VmRSS), CPU time (user+system), goroutines (from its --debug-addr pprof
// listener), and the records the TUI header counts acked, into
// OUT/soak.csv; at the end it saves the heap profile to OUT/heap.pb.gz
// and writes OUT/soak.md, the summary and the curves, and prints it.
func soakMain(args []string) int {
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	kbatch := fs.String("kbatch", "bin/kbatch", "kbatch binary")
	duration := fs.Duration("duration", time.Hour, "how long to run")
	every := fs.Duration("every", 10*time.Second, "sampling interval")
	warmup := fs.Duration("warmup", 5*time.Minute, "RSS is compared from this point on")
	parts := fs.Int("partitions", 50, "partitions")
	rate := fs.Int("rate", 5000, "records per second")
	size := fs.Int("size", 200, "value size in bytes")
	out := fs.String("out", ".cache/soak", "folder for soak.csv and soak.md")
	_ = fs.Parse(args)
	if err := soak(soakOptions{*kbatch, *duration, *every, *warmup, *parts, *rate, *size, *out}); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun soak:", err)
		return 1
	}
	return 0
}

type soakOptions struct {
	kbatch                  string
	duration, every, warmup time.Duration
	parts, rate, size       int
	out                     string
}

// soakSample is one row of soak.csv.
type soakSample struct {
	at  time.Duration
	rss int64 // KiB
	// anon and file split rss: the process's own memory (Go's heap,
	// stacks, runtime) and the file pages it touched: its binary's and
	// those of the offset store, which bbolt maps (store, from smaps;
	// it grows with the store's batch log up to the log's cap). heap is
	// the Go heap in use (HeapInuse), -1 when not read.
	anon, file, store, heap int64 // KiB
	cpu                     time.Duration
	goroutines              int
	acked                   int64 // records the TUI header counts acked
	produced                int64
	load1                   string
}

func soak(o soakOptions) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return fmt.Errorf("tmux is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kbatch-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	traffic := exec.Command(self, "soak-traffic", "-partitions", strconv.Itoa(o.parts), "-rate", strconv.Itoa(o.rate), "-size", strconv.Itoa(o.size))
	traffic.Stderr = os.Stderr
	tin, err := traffic.StdinPipe()
	if err != nil {
		return err
	}
	tout, err := traffic.StdoutPipe()
	if err != nil {
		return err
	}
	if err := traffic.Start(); err != nil {
		return err
	}
	defer func() { _ = tin.Close(); _ = traffic.Wait() }()
	tr := bufio.NewReader(tout)
	line, err := tr.ReadString('\n')
	if err != nil {
		return fmt.Errorf("soak-traffic did not start: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		return fmt.Errorf("soak-traffic said %q", line)
	}
	brokers, topic := f[0], f[1]
	produced := func() int64 {
		if _, err := io.WriteString(tin, "count\n"); err != nil {
			return -1
		}
		l, err := tr.ReadString('\n')
		if err != nil {
			return -1
		}
		v, _ := strings.CutPrefix(strings.Fields(l)[0], "produced=")
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}

	debugAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	sock := fmt.Sprintf("benchrun-soak-%d", os.Getpid())
	tmux := func(a ...string) *exec.Cmd {
		return exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, a...)...)
	}
	defer func() { _ = tmux("kill-server").Run() }()
	storePath := filepath.Join(tmp, "offsets.db")
	kargs := []string{o.kbatch, "watch", "-b", brokers, "-t", topic, "--reset", "latest",
		"--store", storePath, "--debug-addr", debugAddr}
	if out, err := tmux("new-session", "-d", "-s", "soak", "-x", "140", "-y", "40", "exec "+shellQuote(kargs)).CombinedOutput(); err != nil {
		return fmt.Errorf("tmux: %v: %s", err, out)
	}
	pout, err := tmux("display-message", "-p", "-t", "soak", "#{pane_pid}").Output()
	if err != nil {
		return fmt.Errorf("tmux: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pout)))
	start := time.Now()
	fmt.Fprintf(os.Stderr, "soak: kbatch pid %d on %s (topic %s, %d partitions, %d records/s), pprof on http://%s/debug/pprof/, for %s\n",
		pid, brokers, topic, o.parts, o.rate, debugAddr, o.duration)

	csvPath := filepath.Join(o.out, "soak.csv")
	cf, err := os.Create(csvPath)
	if err != nil {
		return err
	}
	defer cf.Close()
	w := csv.NewWriter(cf)
	_ = w.Write([]string{"seconds", "rss_kib", "cpu_seconds", "goroutines", "acked_records", "produced_records", "load1", "rss_anon_kib", "rss_file_kib", "heap_inuse_kib", "rss_store_kib"})

	sig, stopSig := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSig()
	var samples []soakSample
	t := time.NewTicker(o.every)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-sig.Done():
			fmt.Fprintln(os.Stderr, "soak: interrupted; summarising what ran")
			done = true
			continue
		case <-t.C:
		}
		if !processAlive(pid) {
			screen, _ := tmux("capture-pane", "-p", "-t", "soak").Output()
			return fmt.Errorf("kbatch ended after %s; screen: %q", time.Since(start).Round(time.Second), screen)
		}
		s := soakSample{at: time.Since(start), cpu: cpuOf(pid), produced: produced(), load1: loadAvg()}
		s.rss, _ = readStatusKiB(pid, "VmRSS:")
		s.anon, _ = readStatusKiB(pid, "RssAnon:")
		s.file, _ = readStatusKiB(pid, "RssFile:")
		s.store = mappedKiB(pid, storePath)
		s.heap = heapInuseKiB(debugAddr)
		s.goroutines = goroutines(debugAddr)
		if screen, err := tmux("capture-pane", "-p", "-t", "soak", "-S", "0", "-E", "0").Output(); err == nil {
			if m := ackedRE.FindSubmatch(screen); m != nil {
				s.acked, _ = strconv.ParseInt(strings.ReplaceAll(string(m[2]), ",", ""), 10, 64)
			}
		}
		samples = append(samples, s)
		_ = w.Write([]string{strconv.FormatFloat(s.at.Seconds(), 'f', 1, 64), strconv.FormatInt(s.rss, 10),
			strconv.FormatFloat(s.cpu.Seconds(), 'f', 2, 64), strconv.Itoa(s.goroutines),
			strconv.FormatInt(s.acked, 10), strconv.FormatInt(s.produced, 10), s.load1,
			strconv.FormatInt(s.anon, 10), strconv.FormatInt(s.file, 10), strconv.FormatInt(s.heap, 10),
			strconv.FormatInt(s.store, 10)})
		w.Flush()
		done = s.at >= o.duration
	}
	// The heap at the end, for `go tool pprof OUT/heap.pb.gz`: whether
	// memory above the start is live data or garbage under the limit.
	if err := saveURL("http://"+debugAddr+"/debug/pprof/heap?gc=1", filepath.Join(o.out, "heap.pb.gz")); err != nil {
		fmt.Fprintln(os.Stderr, "soak: no heap profile:", err)
	}
	_ = tmux("send-keys", "-t", "soak", "q").Run()
	report := soakReport(o, samples)
	if err := os.WriteFile(filepath.Join(o.out, "soak.md"), []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Print(report)
	return nil
}

// saveURL writes the body of a GET of url to path.
func saveURL(url, path string) error {
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// freeLoopbackAddr is a 127.0.0.1 port nobody listens on right now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// debugGet reads path from kbatch's --debug-addr listener: the first
// limit bytes of the answer (all of it when limit < 0); false when it does
// not answer.
func debugGet(addr, path string, limit int64) ([]byte, bool) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if limit < 0 {
		b, err := io.ReadAll(resp.Body)
		return b, err == nil
	}
	head := make([]byte, limit)
	n, _ := io.ReadFull(resp.Body, head)
	_, _ = io.Copy(io.Discard, resp.Body)
	return head[:n], true
}

var goroutineTotalRE = regexp.MustCompile(`goroutine profile: total (\d+)`)

// goroutines reads the count of goroutines from kbatch's --debug-addr
// listener; -1 when it does not answer.
func goroutines(addr string) int {
	head, ok := debugGet(addr, "/debug/pprof/goroutine?debug=1", 128)
	if !ok {
		return -1
	}
	if m := goroutineTotalRE.FindSubmatch(head); m != nil {
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	return -1
}

var heapInuseRE = regexp.MustCompile(`(?m)^# HeapInuse = (\d+)$`)

// heapInuseKiB reads the Go heap in use (runtime.MemStats.HeapInuse) from
// the heap profile's text form on kbatch's --debug-addr; -1 when it
// cannot.
func heapInuseKiB(addr string) int64 {
	b, ok := debugGet(addr, "/debug/pprof/heap?debug=1", -1)
	if !ok {
		return -1
	}
	if m := heapInuseRE.FindSubmatch(b); m != nil {
		v, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return v / 1024
	}
	return -1
}

// mappedKiB is the resident size of pid's mappings of the file path
// (Rss: lines of /proc/PID/smaps), -1 when smaps cannot be read.
func mappedKiB(pid int, path string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps")
	if err != nil {
		return -1
	}
	defer f.Close()
	var kib int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fs := strings.Fields(l); len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && fs[5] == path
			continue
		}
		if v, ok := strings.CutPrefix(l, "Rss:"); in && ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			kib += n
		}
	}
	if sc.Err() != nil {
		return -1
	}
	return kib
}

// readStatusKiB reads a "Name: N kB" line of /proc/PID/status.
func readStatusKiB(pid int, name string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// loadAvg is the 1-minute load average of the machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Fields(string(b))[0]
}

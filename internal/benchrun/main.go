// Command benchrun measures kbatch against bare clients on the same data in
// the same run, so machine noise cancels out in the ratios. It starts an
// in-process kfake cluster (or uses -brokers), fills a topic, then runs each
// contender as its own process and reports records/s and peak RSS.
//
//	go run ./internal/benchrun -records 1000000 -size 200 -partitions 3
//
// Contenders: "sarama" (a bare sarama partition-consumer loop), "kgo" (a
// bare franz-go loop), "kbatch" (watch --no-tui --until-end --sink
// /dev/null with the store on), "replay" (kbatch replay to /dev/null) and
// "kcat" (kcat -C -e -J, when installed).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "loop" {
		os.Exit(loopMain(os.Args[2:]))
	}
	records := flag.Int("records", 1_000_000, "records to produce")
	size := flag.Int("size", 200, "value size in bytes")
	partitions := flag.Int("partitions", 3, "partitions of the topic")
	brokers := flag.String("brokers", os.Getenv("KBATCH_TEST_BROKERS"), "use this cluster instead of an in-process kfake")
	kbatch := flag.String("kbatch", "bin/kbatch", "kbatch binary")
	only := flag.String("only", "sarama,kgo,kbatch,replay,kcat", "contenders to run, comma-separated")
	rounds := flag.Int("rounds", 2, "rounds; the best of each contender counts")
	flag.Parse()
	if err := run(*records, *size, int32(*partitions), *brokers, *kbatch, strings.Split(*only, ","), *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

type result struct {
	name    string
	elapsed time.Duration
	rss     int64 // KiB
	err     error
}

func run(n, size int, parts int32, brokers, kbatch string, only []string, rounds int) error {
	var seeds []string
	if brokers == "" {
		fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "bench"))
		if err != nil {
			return err
		}
		defer fake.Close()
		seeds = fake.ListenAddrs()
	} else {
		seeds = strings.Split(brokers, ",")
	}
	topic, err := fill(seeds, brokers == "", n, size, parts)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kbatch-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bs := strings.Join(seeds, ",")
	cmds := map[string]func(round int) *exec.Cmd{
		"sarama": func(int) *exec.Cmd { return exec.Command(self, "loop", "sarama", bs, topic) },
		"kgo":    func(int) *exec.Cmd { return exec.Command(self, "loop", "kgo", bs, topic) },
		"kbatch": func(r int) *exec.Cmd {
			return exec.Command(kbatch, "watch", "--no-tui", "--until-end", "--reset", "earliest", "-b", bs, "-t", topic,
				"--sink", "/dev/null", "--store", filepath.Join(tmp, fmt.Sprintf("offsets-%d.db", r)))
		},
		"replay": func(int) *exec.Cmd {
			return exec.Command(kbatch, "replay", topic+":*:earliest-latest", "-b", bs, "--out", "/dev/null")
		},
		"kcat": func(int) *exec.Cmd {
			return exec.Command("kcat", "-C", "-b", bs, "-t", topic, "-o", "beginning", "-e", "-J", "-q")
		},
	}
	best := map[string]result{}
	for r := 0; r < rounds; r++ {
		for _, name := range only {
			mk, ok := cmds[name]
			if !ok {
				return fmt.Errorf("unknown contender %q", name)
			}
			if name == "kcat" {
				if _, err := exec.LookPath("kcat"); err != nil {
					best[name] = result{name: name, err: fmt.Errorf("kcat not installed (apt-get install kcat)")}
					continue
				}
			}
			res := measure(name, mk(r))
			if b, ok := best[name]; !ok || (res.err == nil && (b.err != nil || res.elapsed < b.elapsed)) {
				best[name] = res
			} else if res.rss > b.rss {
				b.rss = res.rss
				best[name] = b
			}
		}
	}
	fmt.Printf("\n%d records of %d B on %d partitions (%s broker), best of %d rounds\n\n", n, size, parts, map[bool]string{true: "in-process kfake", false: "given"}[brokers == ""], rounds)
	fmt.Printf("| %-8s | %10s | %12s | %10s | %-22s |\n", "what", "seconds", "records/s", "peak RSS", "ratio")
	fmt.Printf("|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 10), strings.Repeat("-", 12), strings.Repeat("-", 14), strings.Repeat("-", 12), strings.Repeat("-", 24))
	for _, name := range only {
		res := best[name]
		if res.err != nil {
			fmt.Printf("| %-8s | %s\n", name, res.err)
			continue
		}
		rate := float64(n) / res.elapsed.Seconds()
		ratio := ""
		switch name {
		case "kbatch", "replay":
			if s, ok := best["sarama"]; ok && s.err == nil {
				ratio = fmt.Sprintf("%.2fx sarama", s.elapsed.Seconds()/res.elapsed.Seconds())
			}
			if k, ok := best["kgo"]; ok && k.err == nil && name == "kbatch" {
				ratio += fmt.Sprintf(", %.2fx kgo", k.elapsed.Seconds()/res.elapsed.Seconds())
			}
			if k, ok := best["kcat"]; ok && k.err == nil && name == "replay" {
				ratio += fmt.Sprintf(", %.2fx kcat", k.elapsed.Seconds()/res.elapsed.Seconds())
			}
		}
		fmt.Printf("| %-8s | %10.2f | %12.0f | %7.1f MiB | %-22s |\n", name, res.elapsed.Seconds(), rate, float64(res.rss)/1024, ratio)
	}
	return nil
}

// measure runs cmd to completion and returns its wall time and peak RSS.
func measure(name string, cmd *exec.Cmd) result {
	cmd.Stdout = nil
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	el := time.Since(start)
	res := result{name: name, elapsed: el}
	if err != nil {
		res.err = fmt.Errorf("%v: %s", err, strings.TrimSpace(lastLine(stderr.String())))
		return res
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.rss = ru.Maxrss
	}
	fmt.Fprintf(os.Stderr, "  %-7s %6.2fs  %s\n", name, el.Seconds(), strings.TrimSpace(lastLine(stderr.String())))
	return res
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// fill produces n records of size bytes round-robin over the partitions.
func fill(seeds []string, seeded bool, n, size int, parts int32) (string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	ctx := context.Background()
	topic := "bench"
	if !seeded {
		topic = fmt.Sprintf("bench-%d", time.Now().UnixNano())
		if _, err := kadm.NewClient(cl).CreateTopic(ctx, parts, 1, nil, topic); err != nil {
			return "", err
		}
	}
	value := make([]byte, size)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	start := time.Now()
	errs := make(chan error, 1)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i%1000)), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return "", err
	}
	select {
	case err := <-errs:
		return "", err
	default:
	}
	fmt.Fprintf(os.Stderr, "produced %d records in %.1fs\n", n, time.Since(start).Seconds())
	return topic, nil
}

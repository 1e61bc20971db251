package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerMain serves an in-memory kfake cluster of one broker:
// "benchrun broker". It prints the bootstrap address on stdout, then
// answers commands read from stdin, one per line, until stdin closes:
//
//	counts   print "listoffsets=N metadata=M fetch=F": requests of each
//	         key served since the last reset
//	reset    zero the counts
//
// benchrun runs it as its own process so that the broker's CPU, heap and
// GC are not those of the process that times the contenders, and so the
// contenders' peak RSS is their own (see measure.go).
func brokerMain() int {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun broker:", err)
		return 1
	}
	defer fake.Close()
	var listOffsets, metadata, fetch atomic.Int64
	countRequests(fake, keyListOffsets, &listOffsets)
	countRequests(fake, keyMetadata, &metadata)
	countRequests(fake, keyFetch, &fetch)
	fmt.Println(strings.Join(fake.ListenAddrs(), ","))
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case "counts":
			fmt.Printf("listoffsets=%d metadata=%d fetch=%d\n", listOffsets.Load(), metadata.Load(), fetch.Load())
		case "reset":
			listOffsets.Store(0)
			metadata.Store(0)
			fetch.Store(0)
			fmt.Println("ok")
		}
	}
	return 0
}

// Kafka request keys.
const (
	keyFetch       = int16(kmsg.Fetch)
	keyListOffsets = int16(kmsg.ListOffsets)
	keyMetadata    = int16(kmsg.Metadata)
)

// countRequests adds to n for every request of key the cluster serves,
// which kfake then answers as usual (the observer returns "not handled").
func countRequests(fake *kfake.Cluster, key int16, n *atomic.Int64) {
	fake.ControlKey(key, func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		return nil, nil, false
	})
}

// broker is a running "benchrun broker" child.
type broker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	addrs string
}

// startBroker starts a kfake broker in its own process.
func startBroker(self string) (*broker, error) {
	cmd := exec.Command(self, "broker")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &broker{cmd: cmd, stdin: in, out: bufio.NewReader(out)}
	line, err := b.out.ReadString('\n')
	if err != nil {
		b.stop()
		return nil, fmt.Errorf("benchrun broker did not start: %w", err)
	}
	b.addrs = strings.TrimSpace(line)
	return b, nil
}

// requestCounts are the requests of each kind the broker served.
type requestCounts struct{ listOffsets, metadata, fetch int64 }

// counts asks the broker for its request counts since the last reset.
func (b *broker) counts() (requestCounts, error) {
	var c requestCounts
	if _, err := io.WriteString(b.stdin, "counts\n"); err != nil {
		return c, err
	}
	line, err := b.out.ReadString('\n')
	if err != nil {
		return c, err
	}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "listoffsets":
			c.listOffsets = n
		case "metadata":
			c.metadata = n
		case "fetch":
			c.fetch = n
		}
	}
	return c, nil
}

// reset zeroes the broker's request counts.
func (b *broker) reset() error {
	if _, err := io.WriteString(b.stdin, "reset\n"); err != nil {
		return err
	}
	_, err := b.out.ReadString('\n')
	return err
}

// stop ends the broker and waits for it.
func (b *broker) stop() {
	_ = b.stdin.Close()
	_ = b.cmd.Wait()
}

// serveMain starts a broker, fills a topic and serves it until stdin
// closes, for experiments and profiles by hand: "benchrun serve [-records
// N] [-partitions P] [-size B] [-shape ROW]" prints "BROKERS TOPIC" on
// stdout.
func serveMain(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	n := fs.Int("records", 1_000_000, "records to produce (with -shape: the matrix row's, 200 MiB of values and at most 1 M records)")
	parts := fs.Int("partitions", 3, "partitions")
	size := fs.Int("size", 200, "value size in bytes")
	repetitive := fs.Bool("repetitive", false, "values that compress about twentyfold")
	shapeName := fs.String("shape", "", "a data-shape row of the matrix instead (bin200, avro1k, tiny16, …; -size and -repetitive then do not apply)")
	_ = fs.Parse(args)
	sh := textShape(*size, *repetitive)
	if *shapeName != "" {
		rows, err := pickShapes(*shapeName + ",") // one row by name: "none" is the uncompressed row here, not "no rows"
		if err != nil || len(rows) != 1 {
			fmt.Fprintln(os.Stderr, "benchrun serve: -shape takes one row name")
			return 2
		}
		sh = rows[0]
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "records" })
		if !set {
			// A row's records as the matrix fills them: a million
			// records of the 1 MiB row would be a terabyte.
			*n = matrixRecords(sh, defaultMatrixMB, defaultMatrixMax)
		}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun serve:", err)
		return 1
	}
	b, err := startBroker(self)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun serve:", err)
		return 1
	}
	defer b.stop()
	topic, err := fillShape(strings.Split(b.addrs, ","), "bench", *n, int32(*parts), sh)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun serve:", err)
		return 1
	}
	fmt.Println(b.addrs, topic)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// profileMain runs the stream of `kbatch watch --no-tui --until-end
// --reset earliest --sink /dev/null` (store on, in a temporary folder)
// in this process, so it can be profiled without the broker in the
// profile: "benchrun profile [-cpuprofile F] [-trace F] [-memprofile F]
// BROKERS TOPIC". The JSON lines go to /dev/null; a summary to stderr.
func profileMain(args []string) int {
	fs := flag.NewFlagSet("profile", flag.ExitOnError)
	cpu := fs.String("cpuprofile", "", "write a CPU profile")
	tr := fs.String("trace", "", "write an execution trace")
	mem := fs.String("memprofile", "", "write an allocation profile at the end")
	_ = fs.Parse(args)
	if fs.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchrun profile [flags] BROKERS TOPIC")
		return 2
	}
	for _, p := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{{*cpu, pprof.StartCPUProfile, pprof.StopCPUProfile}, {*tr, trace.Start, trace.Stop}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		_ = p.start(f)
		defer p.stop()
	}
	n, err := profileStream(strings.Split(fs.Arg(0), ","), fs.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun profile:", err)
		return 1
	}
	if *mem != "" {
		f, err := os.Create(*mem)
		if err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	fmt.Fprintf(os.Stderr, "%d records\n", n)
	return 0
}

func profileStream(brokers []string, topic string) (int64, error) {
	dir, err := os.MkdirTemp("", "kbatch-profile-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	st, err := offsets.Open(filepath.Join(dir, "offsets.db"), offsets.OpenOptions{})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	sink, err := consumer.OpenFileSink(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer sink.Close()
	cc := kafka.ClientConfig{Brokers: brokers}
	client, err := kafka.Dial(cc)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	start := time.Now()
	s, _, err := consumer.Start(context.Background(), consumer.Config{Client: client, Brokers: brokers, Topics: []string{topic},
		Name: topic, Reset: offsets.ResetEarliest, UntilEnd: true, Store: st, Processor: sink, Samples: 5})
	if err != nil {
		return 0, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	w := bufio.NewWriter(devnull)
	var buf []byte
	var n int64
	var first time.Duration
	for ev := range s.Events() {
		buf, _ = consumer.AppendEventJSON(buf[:0], ev)
		_, _ = w.Write(buf)
		switch e := ev.(type) {
		case *consumer.BatchEvent:
			if first == 0 {
				first = time.Since(start)
			}
		case *consumer.Ended:
			n = e.Records
			err = e.Err
		}
	}
	_ = w.Flush()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(os.Stderr, "first batch after %s, end after %s\n", first.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return n, err
}

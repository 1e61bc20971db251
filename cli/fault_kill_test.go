package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// TestKilledKbatchLosesNothing is docs/design.md §2.4 under SIGKILL: while a
// producer writes sequence-numbered records to 3 partitions, kbatch is
// killed at random moments and restarted on the same store; after a final
// --until-end run, the sink files together hold every produced offset, and
// any record delivered twice lies inside a batch the store marks
// redelivered.
func TestKilledKbatchLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test; runs without -short")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("seq", 3)
	bin := kbatchBinary(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "offsets.db")
	brokers := strings.Join(kc.Brokers, ",")

	const perPartition = 3000
	produced := make(chan error, 1)
	go func() { produced <- produceSequence(kc.Client(), topic, perPartition) }()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills := 0
	var sinks []string
	for run := 0; kills < 16; run++ {
		sink := filepath.Join(dir, fmt.Sprintf("sink-%02d.jsonl", run))
		sinks = append(sinks, sink)
		// Every other run writes its sink into a pipe the test drains
		// slowly, so processing is slow and kills often land between a
		// batch's plan and its ack.
		var drained chan struct{}
		writerGone := make(chan struct{})
		if run%2 == 1 {
			fifo := sink + ".fifo"
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			drained = slowDrain(t, fifo, sink, writerGone)
			sink = fifo
		}
		cmd := exec.Command(bin, "watch", "--no-tui", "-b", brokers, "-t", topic, "--store", store, "--sink", sink,
			"--reset", "earliest", "--interval", "30ms", "--max-per-partition", "150")
		cmd.Env = isolatedEnv(t)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The fault: a kill at a random moment, not a synchronisation.
		time.Sleep(time.Duration(300+rng.IntN(600)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		close(writerGone)
		if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("run %d ended on its own (%v) before the kill: %s", run, err, stderr.String())
		}
		if drained != nil {
			<-drained
		}
		kills++
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "sink-final.jsonl")
	sinks = append(sinks, final)
	out, errOut, code := runKbatch(t, "watch", "--no-tui", "-b", brokers, "-t", topic, "--store", store, "--sink", final,
		"--reset", "earliest", "--until-end", "--interval", "30ms")
	if code != 0 {
		t.Fatalf("final run exit %d: %s\n%s", code, errOut, out)
	}

	seen := map[offsets.Partition]map[int64]int{}
	delivered := 0
	for _, s := range sinks {
		for _, r := range readSink(t, s) {
			p := offsets.Partition{Topic: r.Topic, Partition: r.Partition}
			if seen[p] == nil {
				seen[p] = map[int64]int{}
			}
			seen[p][r.Offset]++
			delivered++
		}
	}
	st, err := offsets.Open(store, offsets.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := st.Batches(topic, 100000)
	if err != nil {
		t.Fatal(err)
	}
	redelivered := func(p offsets.Partition, off int64) bool {
		for _, b := range log {
			for _, r := range b.Ranges {
				if b.Redelivered && r.Partition == p && r.From <= off && off < r.Until {
					return true
				}
			}
		}
		return false
	}
	lost, dups := 0, 0
	for part := int32(0); part < 3; part++ {
		p := offsets.Partition{Topic: topic, Partition: part}
		for off := int64(0); off < perPartition; off++ {
			switch n := seen[p][off]; {
			case n == 0:
				lost++
				if lost < 10 {
					t.Errorf("%s offset %d never delivered", p, off)
				}
			case n > 1:
				dups += n - 1
				if !redelivered(p, off) {
					t.Errorf("%s offset %d delivered %d times but in no redelivered batch", p, off, n)
				}
			}
		}
	}
	t.Logf("kills=%d produced=%d delivered=%d duplicated=%d lost=%d batches=%d", kills, 3*perPartition, delivered, dups, lost, len(log))
	if lost > 0 {
		t.Fatalf("%d records lost", lost)
	}
}

// slowDrain copies the pipe at fifo into file, a few KiB at a time with a
// pause between reads (the pause is the fault being simulated: a slow
// consumer of the sink), until the writer is gone. The returned channel is
// closed when the copy is complete.
func slowDrain(t *testing.T, fifo, file string, writerGone <-chan struct{}) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Opening for read+write never blocks and keeps the pipe open
		// until the writer has come and gone.
		f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		out, err := os.Create(file)
		if err != nil {
			t.Error(err)
			return
		}
		defer out.Close()
		_ = syscall.SetNonblock(int(f.Fd()), false)
		// The smallest pipe buffer, so the writer blocks almost at once.
		const fSetPipeSize = 1031
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSize, 4096)
		buf := make([]byte, 4096)
		wrote := false
		for {
			n, err := f.Read(buf)
			if n > 0 {
				wrote = true
				_, _ = out.Write(buf[:n])
				time.Sleep(15 * time.Millisecond)
			}
			if n == 0 && (err == nil || err == io.EOF) && !wrote {
				select {
				case <-writerGone:
					return // killed before it opened the sink
				case <-time.After(5 * time.Millisecond): // no writer yet
				}
				continue
			}
			if err != nil || n == 0 {
				return
			}
		}
	}()
	return done
}

type sinkRecord struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Value     string `json:"value"`
}

// readSink reads a sink file; a last line cut short by a kill is ignored.
func readSink(t *testing.T, path string) []sinkRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []sinkRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r sinkRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) && bytes.HasSuffix(b, sc.Bytes()) {
				break // torn final line: the batch was never acked
			}
			t.Fatalf("%s: bad line %q: %v", path, sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// produceSequence writes n records per partition, {"seq":i}, in small
// bursts over a few seconds.
func produceSequence(cl *kgo.Client, topic string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for p := int32(0); p < 3; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i += 50 {
				recs := make([]*kgo.Record, 0, 50)
				for j := i; j < i+50 && j < n; j++ {
					recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf(`{"seq":%d}`, j))})
				}
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					errs <- err
					return
				}
				time.Sleep(100 * time.Millisecond) // pacing: traffic spread over the kills
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

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

// TestBrokerRestartMidStream kills the real broker with SIGKILL while kbatch
// streams, starts it again, and checks that kbatch kept running, reported
// the trouble as an event, and that the acked ranges stay contiguous with
// every produced record in the sink. It needs the real broker of
// `make kafka-up` (make test-kafka sets KBATCH_TEST_KAFKA_RESTART).
func TestBrokerRestartMidStream(t *testing.T) {
	restart := os.Getenv("KBATCH_TEST_KAFKA_RESTART")
	if restart == "" || !testkafka.Real() {
		t.Skip("needs a real broker it may restart: run via make test-kafka")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("restart", 3)
	dir := t.TempDir()
	sink := filepath.Join(dir, "sink.jsonl")
	cmd := exec.Command(kbatchBinary(t), "watch", "--no-tui", "-b", strings.Join(kc.Brokers, ","), "-t", topic,
		"--store", filepath.Join(dir, "o.db"), "--sink", sink, "--reset", "earliest", "--interval", "100ms")
	cmd.Env = isolatedEnv(t)
	lines, stderr := startLines[jsonLine](t, cmd)

	const perPartition = 400
	produced := make(chan error, 1)
	go func() { produced <- produceSequence(kc.Client(), topic, perPartition) }()

	covered := map[int32]int64{}
	events := map[string]int{}
	restarted := false
	total := func() (n int64) {
		for _, u := range covered {
			n += u
		}
		return n
	}
	deadline := time.After(3 * time.Minute)
	for total() < 3*perPartition {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kbatch ended: %s", stderr.String())
			}
			switch l.Type {
			case "event":
				events[l.Code]++
			case "batch":
				for _, r := range l.Ranges {
					if r.From != covered[r.Partition] {
						t.Fatalf("p%d: batch %d starts at %d, previous ended at %d", r.Partition, l.Batch, r.From, covered[r.Partition])
					}
					covered[r.Partition] = r.Until
				}
			}
			if !restarted && total() > 300 {
				restarted = true
				out, err := exec.Command(restart).CombinedOutput()
				if err != nil {
					t.Fatalf("restarting the broker: %v\n%s", err, out)
				}
				t.Logf("restarting the broker:\n%s", out) // a retried start says why
			}
		case <-deadline:
			t.Fatalf("kbatch covered %v of %d per partition after the restart; events %v; stderr %s", covered, perPartition, events, stderr.String())
		}
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kbatch after SIGTERM: %v: %s", err, stderr.String())
	}
	seen := map[offsets.Partition]map[int64]bool{}
	for _, r := range readSink(t, sink) {
		p := offsets.Partition{Topic: r.Topic, Partition: r.Partition}
		if seen[p] == nil {
			seen[p] = map[int64]bool{}
		}
		seen[p][r.Offset] = true
	}
	for p := int32(0); p < 3; p++ {
		if n := len(seen[offsets.Partition{Topic: topic, Partition: p}]); n != perPartition {
			t.Errorf("partition %d: %d distinct records in the sink, want %d", p, n, perPartition)
		}
	}
	t.Logf("events during the restart: %v", events)
	if events["broker-error"] == 0 {
		t.Errorf("no broker-error event reported during the restart (events %v)", events)
	}
}

// TestRetentionBelowStoredPosition deletes records below a stored position
// (DeleteRecords, as retention does): the next start reports data loss
// naming the partition, the offsets and how many were lost, and continues
// from the log start even under --reset latest (the default); with
// --fail-on-data-loss it writes the event line and exits 1 instead.
func TestRetentionBelowStoredPosition(t *testing.T) {
	kc, topic := filledTopic(t, "retention", 2, 30, 100, 100)
	store := filepath.Join(t.TempDir(), "o.db")
	b := strings.Join(kc.Brokers, ",")
	watch := func(extra ...string) (string, string, int) {
		args := append([]string{"watch", "--no-tui", "-b", b, "-t", topic, "--store", store, "--until-end"}, extra...)
		return runKbatch(t, args...)
	}
	if _, errOut, code := watch("-o", topic+"=40"); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	kc.ProduceN(topic, 1, 50, 30)
	kc.DeleteRecords(topic, 1, 130)

	out, errOut, code := watch("--fail-on-data-loss")
	if code != 1 || !strings.Contains(errOut, topic+"[1]") || !strings.Contains(errOut, "100") || !strings.Contains(errOut, "130") {
		t.Fatalf("--fail-on-data-loss: exit %d, stderr %q; want exit 1 naming %s[1], 100 and 130", code, errOut, topic)
	}
	if !strings.Contains(out, `"code":"data-loss"`) || !strings.Contains(out, `"lost":30`) {
		t.Fatalf("--fail-on-data-loss: stdout %q, want the data-loss event line first", out)
	}

	out, errOut, code = watch()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var loss []jsonLine
	var p1 [2]int64
	for _, l := range parseLines(t, []byte(out)) {
		if l.Type == "event" && l.Code == "data-loss" {
			loss = append(loss, l)
		}
		for _, r := range l.Ranges {
			if r.Partition == 1 {
				if p1[0] == 0 {
					p1[0] = r.From
				}
				p1[1] = r.Until
			}
		}
	}
	if len(loss) != 1 {
		t.Fatalf("data-loss events %+v, want one", loss)
	}
	if !strings.Contains(out, `"expected":100`) || !strings.Contains(out, `"log_start":130`) || !strings.Contains(out, `"lost":30`) {
		t.Fatalf("data-loss event lacks expected 100 / log_start 130 / lost 30:\n%s", out)
	}
	if !strings.Contains(out, `"jump":"data-loss"`) || !strings.Contains(out, `"jumped":true`) {
		t.Fatalf("the batch after the loss is not marked as a jump:\n%s", out)
	}
	if p1 != [2]int64{130, 150} {
		t.Fatalf("partition 1 read %v after the loss, want [130 150]", p1)
	}
}

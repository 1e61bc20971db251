package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// sinkLines reads a --sink file: the offsets of its record lines, and the
// lines that are not one JSON object.
func sinkLines(t *testing.T, file string) (offsets []int64, broken []string) {
	t.Helper()
	data := readFile(t, file)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		broken = append(broken, "(the file does not end with a newline)")
	}
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var r struct {
			Offset *int64 `json:"offset"`
		}
		if err := json.Unmarshal(l, &r); err != nil || r.Offset == nil {
			broken = append(broken, fmt.Sprintf("%.60q", l))
			continue
		}
		offsets = append(offsets, *r.Offset)
	}
	return offsets, broken
}

// TestSinkKeepsWholeLinesAfterAFailedWrite: a --sink write that fails
// part-way (a full disk, here a file size limit) would leave a cut-off
// line, and the re-delivered batch's first record, appended to it, would
// be acked inside a broken line that a line reader skips. The sink cuts a
// failed batch off the file, and a cut-off last line left by a write that
// never finished (a kill) is removed at the next start; every record has
// a line of its own.
func TestSinkKeepsWholeLinesAfterAFailedWrite(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for ulimit")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("torn", 1)
	for i := range 8 {
		kc.Produce(&kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i) + strings.Repeat(".", 30000))})
	}
	dir := t.TempDir()
	store, sink := filepath.Join(dir, "o.db"), filepath.Join(dir, "sink.jsonl")
	common := []string{"watch", "--no-tui", "-b", strings.Join(kc.Brokers, ","), "-t", topic, "--reset", "earliest",
		"--max-per-partition", "1", "--store", store, "--sink", sink}
	if _, e, code := runKbatch(t, append(common, "--batches", "1")...); code != 0 {
		t.Fatalf("run 1: exit %d: %s", code, e)
	}
	// Files may grow to 100 KiB only: a record's write fails part-way.
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 100; exec "$0" "$@"`, kbatchBinary(t)}, append(common, "--until-end")...)...)
	cmd.Env = isolatedEnv(t)
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitFailure || !bytes.Contains(out, []byte("re-delivered on the next start")) {
		t.Fatalf("run 2 under a file size limit: exit %d: %s", cmd.ProcessState.ExitCode(), out)
	}
	if _, broken := sinkLines(t, sink); len(broken) > 0 {
		t.Errorf("after the failed write the sink has lines that are not records: %v", broken)
	}
	// A write that never finished: the process killed in the middle of a
	// line (written here by hand), its batch not acked.
	f, err := os.OpenFile(sink, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"topic":"` + topic + `","partition":0,"offset":4,"timestamp":"20`); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	o, e, code := runKbatch(t, append(common, "--until-end")...)
	if code != 0 {
		t.Fatalf("run 3: exit %d: %s", code, e)
	}
	if !strings.Contains(o, `"code":"redelivered"`) {
		t.Errorf("run 3 did not re-deliver the failed batch: %s", o)
	}
	if !strings.Contains(e, "cut off by a write that did not finish") {
		t.Errorf("run 3 did not say that it removed the cut-off line: %q", e)
	}
	got, broken := sinkLines(t, sink)
	if len(broken) > 0 {
		t.Errorf("lines that are not records: %v", broken)
	}
	seen := map[int64]bool{}
	for _, o := range got {
		seen[o] = true
	}
	for o := int64(0); o < 8; o++ {
		if !seen[o] {
			t.Errorf("offset %d has no line in the sink (got %v)", o, got)
		}
	}
}

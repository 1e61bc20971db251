package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestFormatKcatMatchesKcat reads the same records with kcat -C -J and
// with kbatch's --format kcat (replay to stdout, and watch --sink - under
// --no-tui) and checks every line has kcat's fields with kcat's values,
// tstype included ("create": the producer set the times).
func TestFormatKcatMatchesKcat(t *testing.T) {
	needKcat(t)
	kc := testkafka.New(t)
	topic := kc.Topic("kcatshape", 2)
	var recs []*kgo.Record
	for i := 0; i < 30; i++ {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(`{"seq":` + strconv.Itoa(i) + `}`)}
		if i%3 != 0 {
			r.Key = []byte("user-" + strconv.Itoa(i))
		}
		if i%4 == 0 {
			r.Headers = []kgo.RecordHeader{{Key: "source", Value: []byte("web")}, {Key: "trace", Value: []byte("t-" + strconv.Itoa(i))}}
		}
		recs = append(recs, r)
	}
	kc.Produce(recs...)
	b := strings.Join(kc.Brokers, ",")

	want := map[string]map[string]any{}
	for p := 0; p < 2; p++ {
		out, err := exec.Command("kcat", "-C", "-J", "-q", "-e", "-b", kc.Brokers[0], "-t", topic, "-p", strconv.Itoa(p), "-o", "beginning").Output()
		if err != nil {
			t.Fatalf("kcat: %v", err)
		}
		for id, line := range kcatLines(t, "kcat", out) {
			if line["tstype"] != "create" {
				t.Fatalf("kcat %s: tstype %v", id, line["tstype"])
			}
			want[id] = line
		}
	}
	if len(want) != len(recs) {
		t.Fatalf("kcat read %d records, want %d", len(want), len(recs))
	}

	replayOut, replayErr, code := runKbatch(t, "replay", topic+":*:earliest-latest", "-b", b, "--format", "kcat")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, replayErr)
	}
	store := t.TempDir() + "/offsets.db"
	sinkOut, sinkErr, code := runKbatch(t, "watch", "-t", topic, "-b", b, "--store", store, "--reset", "earliest",
		"--no-tui", "--until-end", "--sink", "-", "--format", "kcat")
	if code != 0 {
		t.Fatalf("watch exit %d: %s", code, sinkErr)
	}
	// Under --sink -, stdout holds records only; the event lines are on stderr.
	if ev := parseLines(t, []byte(sinkErr)); len(ev) < 2 || ev[0].Type != "start" || ev[len(ev)-1].Type != "end" {
		t.Errorf("stderr of watch --sink -: want start ... end event lines, got:\n%s", sinkErr)
	}
	for name, out := range map[string]string{"replay --format kcat": replayOut, "watch --sink - --format kcat": sinkOut} {
		got := kcatLines(t, name, []byte(out))
		if len(got) != len(want) {
			t.Errorf("%s: %d records, kcat %d", name, len(got), len(want))
		}
		for id, w := range want {
			if g := got[id]; !reflect.DeepEqual(g, w) {
				t.Errorf("%s %s:\n got %v\nkcat %v", name, id, g, w)
			}
		}
	}
}

// kcatLines decodes kcat -J lines by topic/partition/offset. Every key
// and value the test produces is text, so a JSON library reads kcat's
// output exactly.
func kcatLines(t *testing.T, who string, out []byte) map[string]map[string]any {
	t.Helper()
	lines := map[string]map[string]any{}
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s line %q: %v", who, l, err)
		}
		if _, ok := m["type"]; ok {
			t.Fatalf("%s: an event line among the records: %s", who, l)
		}
		lines[m["topic"].(string)+"/"+string(m["partition"].(json.Number))+"/"+string(m["offset"].(json.Number))] = m
	}
	return lines
}

// TestSinkStdoutNeedsNoTUI: --sink - with the screen on would write
// records over the screen; it is refused with exit 2 before any dialling.
func TestSinkStdoutNeedsNoTUI(t *testing.T) {
	_, errOut, code := runKbatch(t, "watch", "-t", "events", "-b", "127.0.0.1:1", "--sink", "-")
	if code != exitUsage || !strings.Contains(errOut, "--sink -") || !strings.Contains(errOut, "--no-tui") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runKbatch(t, "replay", "events:0:0-1", "-b", "127.0.0.1:1", "--format", "avro")
	if code != exitUsage || !strings.Contains(errOut, `invalid --format "avro"`) {
		t.Errorf("replay --format avro: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runKbatch(t, "replay", "events:0:0-1", "-b", "127.0.0.1:1", "--format", "kcat", "--to-topic", "x")
	if code != exitUsage || !strings.Contains(errOut, "--to-topic") {
		t.Errorf("replay --format kcat --to-topic: exit %d, stderr %q", code, errOut)
	}
}

// TestReplayOutFileIsPrivate: a new --out file holds records, which may be
// anyone's data, so it is created 0600 like every file kbatch writes
// (docs/design.md §2.7); a file that already exists keeps its mode.
func TestReplayOutFileIsPrivate(t *testing.T) {
	kc, topic := filledTopic(t, "private", 1, 10, 3)
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.jsonl")
	kept := writeFile(t, dir, "kept.jsonl", "", 0o640)
	for path, want := range map[string]os.FileMode{fresh: 0o600, kept: 0o640} {
		if _, errOut, code := runKbatch(t, "replay", topic+":0:earliest-latest", "-b", strings.Join(kc.Brokers, ","), "--out", path); code != 0 {
			t.Fatalf("replay exit %d: %s", code, errOut)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want || fi.Size() == 0 {
			t.Errorf("%s: mode %04o, %d bytes; want mode %04o and the records", filepath.Base(path), fi.Mode().Perm(), fi.Size(), want)
		}
	}
}

// TestReplayAgreesWithKcat reads the same range with kbatch replay and with
// kcat -C -J (librdkafka, a client we did not write) and checks that both
// see the same topic, partition, offset, key and value for every record,
// binary values and null keys included.
func TestReplayAgreesWithKcat(t *testing.T) {
	needKcat(t)
	kc := testkafka.New(t)
	topic := kc.Topic("crosscheck", 2)
	values := [][]byte{
		[]byte(`{"seq":1}`), nil, {}, {0xff, 0xfe, 0x00, 0x01}, []byte("café \u202e evil"),
		[]byte("\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07"), bytes.Repeat([]byte{0x80}, 300), []byte("tab\tnew\nline"),
	}
	keys := [][]byte{[]byte("user-1"), nil, {}, {0xc3, 0x28}, []byte("k\x00k")}
	var recs []*kgo.Record
	for i := 0; i < 40; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: keys[i%len(keys)], Value: values[i%len(values)]})
	}
	kc.Produce(recs...)
	out := filepath.Join(t.TempDir(), "replay.jsonl")
	if _, errOut, code := runKbatch(t, "replay", topic+":*:earliest-latest", "-b", strings.Join(kc.Brokers, ","), "--out", out); code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut)
	}
	type rec struct {
		key, value []byte
	}
	ours := map[string]rec{}
	data := readFile(t, out)
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r recordLine
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("replay line %q: %v", line, err)
		}
		ours[fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)] = rec{bytesOf(t, r.Key, r.KeyB64), bytesOf(t, r.Value, r.ValueB64)}
	}
	compared := 0
	for p := 0; p < 2; p++ {
		cmd := exec.Command("kcat", "-C", "-J", "-q", "-e", "-b", kc.Brokers[0], "-t", topic, "-p", strconv.Itoa(p), "-o", "beginning")
		kout, err := cmd.Output()
		if err != nil {
			t.Fatalf("kcat: %v", err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(kout), []byte("\n")) {
			f := parseKcatLine(t, line)
			id := fmt.Sprintf("%s/%s/%s", f["topic"], f["partition"], f["offset"])
			o, ok := ours[id]
			if !ok {
				t.Fatalf("kcat read %s, kbatch replay did not", id)
			}
			kk, kv := f["key"], f["payload"]
			if (kk == nil) != (o.key == nil) || !bytes.Equal(kk, o.key) {
				t.Errorf("%s key: kcat %q, kbatch %q", id, kk, o.key)
			}
			if (kv == nil) != (o.value == nil) || !bytes.Equal(kv, o.value) {
				t.Errorf("%s value: kcat %q, kbatch %q", id, kv, o.value)
			}
			compared++
			delete(ours, id)
		}
	}
	if len(ours) != 0 || compared != len(recs) {
		t.Fatalf("compared %d records of %d; kbatch-only: %d", compared, len(recs), len(ours))
	}
	t.Logf("kbatch replay and kcat -J agree on %d records", compared)
}

func bytesOf(t *testing.T, s, b64 *string) []byte {
	t.Helper()
	switch {
	case s != nil:
		return []byte(*s)
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return nil
}

// parseKcatLine reads one flat kcat -J object. kcat writes bytes >= 0x80
// of keys and payloads raw (not always valid UTF-8), so a JSON library
// would replace them; this keeps every byte. null values map to nil.
func parseKcatLine(t *testing.T, line []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	i := 0
	expect := func(c byte) {
		if i >= len(line) || line[i] != c {
			t.Fatalf("kcat line %q: want %q at %d", line, c, i)
		}
		i++
	}
	str := func() []byte {
		expect('"')
		s := []byte{}
		for i < len(line) && line[i] != '"' {
			c := line[i]
			if c != '\\' {
				s = append(s, c)
				i++
				continue
			}
			i++
			switch e := line[i]; e {
			case 'u':
				v, err := strconv.ParseUint(string(line[i+1:i+5]), 16, 32)
				if err != nil {
					t.Fatalf("kcat line %q: bad escape", line)
				}
				s = utf8.AppendRune(s, rune(v))
				i += 5
			default:
				s = append(s, map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[e])
				i++
			}
		}
		expect('"')
		return s
	}
	expect('{')
	for i < len(line) && line[i] != '}' {
		k := string(str())
		expect(':')
		switch {
		case line[i] == '"':
			out[k] = str()
		case bytes.HasPrefix(line[i:], []byte("null")):
			out[k] = nil
			i += 4
		default:
			j := i
			for j < len(line) && line[j] != ',' && line[j] != '}' {
				j++
			}
			out[k] = line[i:j]
			i = j
		}
		if i < len(line) && line[i] == ',' {
			i++
		}
	}
	return out
}

// needKcat skips the test when kcat, the reference the output is compared
// with, is not installed.
func needKcat(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; .ci/run installs it)")
	}
}

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

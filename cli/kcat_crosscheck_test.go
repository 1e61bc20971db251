package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestReplayAgreesWithKcat reads the same range with kbatch replay and with
// kcat -C -J (librdkafka, a client we did not write) and checks that both
// see the same topic, partition, offset, key and value for every record,
// binary values and null keys included.
func TestReplayAgreesWithKcat(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; .ci/run installs it)")
	}
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

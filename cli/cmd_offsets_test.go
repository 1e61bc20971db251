package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// offsetsWantOK fails the test unless the run exited 0.
func offsetsWantOK(t *testing.T, stdout, stderr string, code int) string {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	return stdout
}

// offsetsWantFail checks the exit code and that stderr ends in exactly one
// "kbatch: ..." line that contains every want.
func offsetsWantFail(t *testing.T, stderr string, code, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stderr: %s", code, wantCode, stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "kbatch: ") || strings.Count(stderr, "kbatch: ") != 1 {
		t.Fatalf("want one error line, got %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("error %q does not contain %q", last, w)
		}
	}
}

type offsetsTestStore struct {
	t    *testing.T
	path string
	st   *offsets.Store
}

// offsetsOpenTestStore opens (creating) the store at path for the test to fill;
// close it before running a command.
func offsetsOpenTestStore(t *testing.T, path string) *offsetsTestStore {
	t.Helper()
	st, err := offsets.Open(path, offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &offsetsTestStore{t: t, path: path, st: st}
}

func (s *offsetsTestStore) close() {
	s.t.Helper()
	if err := s.st.Close(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *offsetsTestStore) stream(name string, topics ...string) {
	s.t.Helper()
	if err := s.st.EnsureStream(name, []string{"127.0.0.1:9092"}, topics); err != nil {
		s.t.Fatal(err)
	}
}

// batch plans batch id with ranges "topic:p:from-until[:jump]" and acks it
// unless ack is false.
func (s *offsetsTestStore) batch(stream string, id uint64, ack bool, ranges ...offsets.BatchRange) {
	s.t.Helper()
	b := offsets.Batch{ID: id, Time: time.Date(2026, 11, 29, 10, 0, int(id), 0, time.UTC), Ranges: ranges}
	for _, r := range ranges {
		b.Records += r.Records
		b.Bytes += r.Bytes
	}
	if err := s.st.Plan(stream, b); err != nil {
		s.t.Fatal(err)
	}
	if ack {
		if err := s.st.Ack(stream, id, b.Time.Add(time.Millisecond)); err != nil {
			s.t.Fatal(err)
		}
	}
}

func offsetsBR(topic string, p int32, from, until int64, jump string) offsets.BatchRange {
	return offsets.BatchRange{Range: offsets.Range{Partition: offsets.Partition{Topic: topic, Partition: p}, From: from, Until: until},
		Records: until - from, Bytes: 10 * (until - from), Jump: jump}
}

func offsetsTP(topic string, p int32) offsets.Partition {
	return offsets.Partition{Topic: topic, Partition: p}
}

// offsetsStored reads a stream's next offsets and events from the store file.
func offsetsStored(t *testing.T, path, stream string) (map[offsets.Partition]int64, []offsets.Event) {
	t.Helper()
	st, err := offsets.Open(path, offsets.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, ok, err := st.Stream(stream)
	if err != nil || !ok {
		t.Fatalf("stream %q: ok %v err %v", stream, ok, err)
	}
	evs, err := st.Events(stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info.Next, evs
}

func offsetsSameNext(t *testing.T, what string, got, want map[offsets.Partition]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for p, off := range want {
		if got[p] != off {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

// offsetsFillEvents makes a store with stream "events" (topic events, 3
// partitions): batches 1–3 acked (3 has a seek jump), batch 4 planned.
func offsetsFillEvents(t *testing.T, path string) {
	s := offsetsOpenTestStore(t, path)
	defer s.close()
	s.stream("events", "events")
	s.batch("events", 1, true, offsetsBR("events", 0, 0, 100, ""), offsetsBR("events", 1, 0, 50, ""))
	s.batch("events", 2, true, offsetsBR("events", 0, 100, 150, ""))
	s.batch("events", 3, true, offsetsBR("events", 0, 400, 420, "seek"), offsetsBR("events", 2, 7, 9, ""))
	s.batch("events", 4, false, offsetsBR("events", 1, 50, 60, ""))
	e := offsets.NewEvent(time.Date(2026, 11, 29, 10, 0, 3, 0, time.UTC), offsets.CodeSeek, offsetsTP("events", 0), "events[0]: seek 150 → 400")
	e.From, e.To = 150, 400
	if err := s.st.AddEvent("events", e); err != nil {
		t.Fatal(err)
	}
}

func TestOffsetsBadInputs(t *testing.T) {
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	s := offsetsOpenTestStore(t, store)
	s.stream("other", "other")
	s.close()
	badJSON := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badJSON, []byte(`{"events":{"0":"x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"offsets", "set", "events:x=5", "--name", "events"}, []string{`invalid offset spec "events:x=5"`, `partition "x"`}},
		{[]string{"offsets", "set", "events:0", "--name", "events"}, []string{`missing "="`}},
		{[]string{"offsets", "set", "--name", "events"}, []string{"needs at least one SPEC"}},
		{[]string{"offsets", "set", "nope:0=5", "--name", "events"}, []string{"topic nope is not read by stream events"}},
		{[]string{"offsets", "set", "events:0=5", "--name", "ghost"}, []string{`unknown stream ghost`, "events, other"}},
		{[]string{"offsets", "set", "events:0=5"}, []string{"holds 2 streams: pass --name"}},
		{[]string{"offsets", "set", "events:0=earliest", "--name", "events"}, []string{`"events:0=earliest" needs the cluster`}},
		{[]string{"offsets", "set", "events=5", "--name", "events"}, []string{`"events=5" needs the cluster`}},
		{[]string{"offsets", "show", "--name", "ghost"}, []string{"unknown stream ghost"}},
		{[]string{"offsets", "show", "--format", "yaml"}, []string{`invalid --format "yaml"`}},
		{[]string{"offsets", "show", "--bogus"}, []string{"unknown flag: --bogus"}},
		{[]string{"offsets", "frobnicate"}, []string{`unknown command "frobnicate"`}},
		{[]string{"offsets", "export", "--name", "events", "--format", "csv"}, []string{`invalid --format "csv"`}},
		{[]string{"offsets", "export", "--name", "events", "--ending"}, []string{"--ending applies to --format spark"}},
		{[]string{"offsets", "export", "--name", "events", "--format", "spark", "-t", "nope"}, []string{"topic nope is not read by stream events"}},
		{[]string{"offsets", "import", "--name", "events"}, []string{"exactly one of"}},
		{[]string{"offsets", "import", "--from-json", badJSON, "--from-group", "g"}, []string{"exactly one of"}},
		{[]string{"offsets", "import", "--from-json", badJSON, "--source", "1"}, []string{"--source applies to --from-spark"}},
		{[]string{"offsets", "import", "--from-group", "g"}, []string{"--from-group needs the cluster"}},
		{[]string{"offsets", "import", "--from-json", badJSON}, []string{"--from-json " + badJSON, "not a number"}},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			_, errOut, code := runInProcess(t, "", append(tc.args, "--store", store)...)
			offsetsWantFail(t, errOut, code, 2, tc.want...)
		})
	}
}

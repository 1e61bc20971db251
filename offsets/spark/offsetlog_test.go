package spark

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

func TestSplitLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\n", []string{"a", ""}},
		{"a\r\nb\rc\nd", []string{"a", "b", "c", "d"}},
		{"\n", []string{""}},
	} {
		if got := splitLines([]byte(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseOffsetLogSyntheticV2(t *testing.T) {
	in := "v2\n" +
		`{"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{},"sourceMetadataInfo":{"0":{"sourceId":"0","providerName":"kafka","apiVersion":"v2"}}}` + "\n" +
		`1:{"logOffset":3}` + "\n" +
		`0:{"events":{"1":8,"0":7}}` + "\n" +
		"clicks:-\n" +
		`orders:{"orders":{"0":1}}`
	log, err := ParseOffsetLog([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if log.Version != 2 || len(log.Sources) != 4 {
		t.Fatalf("got v%d with %d sources", log.Version, len(log.Sources))
	}
	want := []SourceOffset{
		{Index: 1, ID: "1", Raw: `{"logOffset":3}`},
		{Index: 0, ID: "0", Raw: `{"events":{"1":8,"0":7}}`, Kafka: offs("events", 0, 7, 1, 8)},
		{Index: -1, ID: "clicks", Raw: "-", Void: true},
		{Index: -1, ID: "orders", Raw: `{"orders":{"0":1}}`, Kafka: offs("orders", 0, 1)},
	}
	for i, w := range want {
		g := log.Sources[i]
		if g.Index != w.Index || g.ID != w.ID || g.Raw != w.Raw || g.Void != w.Void {
			t.Errorf("source %d = %+v, want %+v", i, g, w)
		}
		sameOffsets(t, "source "+w.ID, g.Kafka, w.Kafka)
	}
	if got, ok := log.BatchTime(); !ok || got.UnixMilli() != 1700000000000 {
		t.Errorf("BatchTime = %v, %v", got, ok)
	}
}

func TestParseOffsetLogSyntheticVoidLine(t *testing.T) {
	log, err := ParseOffsetLog([]byte("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n-\n{\"t\":{\"0\":5}}\n-"))
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Sources) != 3 {
		t.Fatalf("%d sources, want 3", len(log.Sources))
	}
	for _, i := range []int{0, 2} {
		if s := log.Sources[i]; !s.Void || s.Kafka != nil || s.Index != i || s.Raw != "-" {
			t.Errorf("source %d = %+v, want void", i, s)
		}
	}
	sameOffsets(t, "source 1", log.Sources[1].Kafka, offs("t", 0, 5))
}

func TestParseOffsetLogSyntheticLayouts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		metadata string
		raws     []string
	}{
		{"empty metadata line", "v1\n\n0", "", []string{"0"}},
		{"blank metadata line is empty", "v1\n  \n0", "", []string{"0"}},
		{"no sources", "v1\n{}", "{}", nil},
		{"CRLF line ends", "v1\r\n{}\r\n{\"t\":{\"0\":1}}\r\n", "{}", []string{`{"t":{"0":1}}`}},
		{"metadata is trimmed like Java", "v1\n \t{}  \n0", "{}", []string{"0"}},
		{"empty source line is kept", "v1\n{}\n\n0", "{}", []string{"", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, err := ParseOffsetLog([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(log.Metadata) != tc.metadata || (tc.metadata == "" && log.Metadata != nil) {
				t.Errorf("metadata %q, want %q", log.Metadata, tc.metadata)
			}
			var raws []string
			for _, s := range log.Sources {
				raws = append(raws, s.Raw)
			}
			if !slices.Equal(raws, tc.raws) {
				t.Errorf("sources %q, want %q", raws, tc.raws)
			}
		})
	}
}

func TestParseOffsetLogVersions(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"v3\n{}\n0", "unsupported log version v3 (kbatch reads up to v2)"},
		{"v99999\n{}", "unsupported log version v99999 (kbatch reads up to v2)"},
		{"", "malformed: empty file"},
		{"v1", "malformed: no metadata line after the version line"},
		{"1\n{}", `malformed: failed to read log version from the first line (1 bytes, not v<number>)`},
		{"v\n{}", `malformed: failed to read log version from the first line (1 bytes, not v<number>)`},
		{"v0\n{}", `malformed: failed to read log version from the first line (2 bytes, not v<number>)`},
		{"v-1\n{}", `malformed: failed to read log version from the first line (3 bytes, not v<number>)`},
		{"v1x\n{}", `malformed: failed to read log version from the first line (3 bytes, not v<number>)`},
		{" v1\n{}", `malformed: failed to read log version from the first line (3 bytes, not v<number>)`},
		{"v2147483648\n{}", `malformed: failed to read log version from the first line (11 bytes, not v<number>)`},
		{"\x1b[31mv1\n{}", `malformed: failed to read log version from the first line (7 bytes, not v<number>)`},
		{"v1\nnot json\n0", `malformed: line 2, the metadata line, is not a JSON object (8 bytes)`},
		{"v1\n[1]\n0", `malformed: line 2, the metadata line, is not a JSON object (3 bytes)`},
		{"v2\n{}\nno colon", `malformed: line 3 is not sourceId:offset (8 bytes, no ':')`},
		{"v2\n{}\n0:1\n0:2", `malformed: line 4: its source id appears on an earlier line too`},
		{"v1\n{}\n{\"events\":{\"0\":12,\"1\":3", `malformed: line 3: the source's offset is not JSON (23 bytes): cut off or damaged`},
	} {
		_, err := ParseOffsetLog([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseOffsetLog(%q) error %q, want %q", tc.in, err, tc.want)
			continue
		}
		var uv *UnsupportedVersionError
		if strings.HasPrefix(tc.want, "malformed") != errors.Is(err, ErrMalformed) || strings.HasPrefix(tc.want, "unsupported") != errors.As(err, &uv) {
			t.Errorf("ParseOffsetLog(%q): error %v has the wrong type", tc.in, err)
		}
	}
}

func TestBatchTimeAbsent(t *testing.T) {
	for _, in := range []string{"v1\n\n0", "v1\n{}\n0", `v1` + "\n" + `{"batchTimestampMs":"x"}`} {
		log, err := ParseOffsetLog([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if tm, ok := log.BatchTime(); ok {
			t.Errorf("BatchTime(%q) = %v, want none", in, tm)
		}
	}
}

func TestParseCommitLog(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
		err      string
	}{
		{"Spark 2.3 v1", "v1\n{}", 1, ""},
		{"Spark 2.4 v1", `v1` + "\n" + `{"nextBatchWatermarkMs":0}`, 1, ""},
		{"no JSON line reads as {}", "v1", 1, ""},
		{"version line is trimmed", " v1 \n{}", 1, ""},
		{"synthetic v2 with stateUniqueIds", `v2` + "\n" + `{"nextBatchWatermarkMs":0,"stateUniqueIds":{"0":[["a1b2"]]}}`, 2, ""},
		{"synthetic v3 is refused", "v3\n{}", 0, "unsupported log version v3 (kbatch reads up to v2)"},
		{"empty", "", 0, "malformed: empty file"},
		{"no version", "{}", 0, `malformed: failed to read log version from the first line (2 bytes, not v<number>)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseCommitLog([]byte(tc.in))
			if wantedError(t, err, tc.err) {
				return
			}
			if err != nil || v != tc.want {
				t.Errorf("= %d, %v; want %d", v, err, tc.want)
			}
		})
	}
}

func TestParseInitialOffsetsSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Offsets
		err      string
	}{
		{"current format", "\x00v1\n{\"t\":{\"0\":4}}", offs("t", 0, 4), ""},
		{"first byte is not checked", "Zv1\n{\"t\":{\"0\":4}}", offs("t", 0, 4), ""},
		{"2.1.0 format, length byte wrapped past 255", "\x07{\"t\":{\"0\":4}}", offs("t", 0, 4), ""},
		{"v2 is refused", "\x00v2\n{}", nil, "unsupported log version v2 (kbatch reads up to v1)"},
		{"empty", "", nil, "malformed: empty file"},
		{"only the first byte", "\x00", nil, "malformed Kafka offset JSON: unexpected end of input"},
		{"version without newline", "\x00v1", nil, `malformed: failed to read log version: no newline after the first 2 bytes`},
		{"not Kafka JSON", "\x00v1\n0", nil, `malformed Kafka offset JSON: want an object like {"topicA":{"0":23,"1":-1}}, got a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseInitialOffsets([]byte(tc.in))
			if wantedError(t, err, tc.err) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sameOffsets(t, tc.name, got, tc.want)
		})
	}
}

// wantedError reports whether the case wants an error (want is its text,
// "" for none) and fails t when err is not that error.
func wantedError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		return false
	}
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	return true
}

func TestParseOffsetJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Offsets
	}{
		{"one partition", `{"t":{"0":23}}`, offs("t", 0, 23)},
		{"unsorted keys", `{"b":{"2":3,"0":1,"1":2},"a":{"0":-2}}`, merge(offs("b", 0, 1, 1, 2, 2, 3), offs("a", 0, -2))},
		{"whitespace and trailing newline", " {\n \"t\" : { \"1\" : -1 } }\n", offs("t", 1, -1)},
		{"empty object", `{}`, Offsets{}},
		{"topic without partitions", `{"t":{}}`, Offsets{}},
		{"MaxOffset keeps every digit", `{"t":{"0":4611686018427387904}}`, offs("t", 0, 4611686018427387904)},
		{"above 2^53 is not rounded", `{"t":{"0":9007199254740993}}`, offs("t", 0, 9007199254740993)},
		{"max int32 partition", `{"t":{"2147483647":5}}`, offs("t", 2147483647, 5)},
		{"topic names are data", `{"a.b-c_9":{"0":1},"\u00e9":{"0":2}}`, merge(offs("a.b-c_9", 0, 1), offs("é", 0, 2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOffsetJSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			sameOffsets(t, tc.in, got, tc.want)
		})
	}
}

func TestParseOffsetJSONRejects(t *testing.T) {
	for _, in := range []string{
		``,
		`   `,
		`null`,
		`[]`,
		`0`,
		`{"logOffset":345}`,
		`{"sourceVersion":1,"reservoirVersion":3}`,
		`{"t":null}`,
		`{"t":[1]}`,
		`{"t":"earliest"}`,
		`{"t":{"x":1}}`,
		`{"t":{"":1}}`,
		`{"t":{"-1":1}}`,
		`{"t":{"2147483648":1}}`,
		`{"t":{"0":1.5}}`,
		`{"t":{"0":1.0}}`,
		`{"t":{"0":1e3}}`,
		`{"t":{"0":"5"}}`,
		`{"t":{"0":null}}`,
		`{"t":{"0":true}}`,
		`{"t":{"0":9223372036854775808}}`,
		`{"t":{"1":1,"01":2}}`,
		`{"t":{"0":1},"t":{"1":1}}`,
		`{"":{"0":1}}`,
		`{"t":{"0":1}} x`,
		`{}{}`,
		`{"t":{"0":1}`,
		`{"t":{"0":`,
		`{"t":{"0":1,}}`,
		`{'t':{}}`,
	} {
		got, err := ParseOffsetJSON([]byte(in))
		if err == nil || got != nil {
			t.Errorf("ParseOffsetJSON(%q) = %v, %v; want an error", in, got, err)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseOffsetJSON(%q) error %v does not wrap ErrMalformed", in, err)
		}
	}
}

func TestParseOffsetJSONErrorMessage(t *testing.T) {
	_, err := ParseOffsetJSON([]byte(`{"events":{"zero":1}}`))
	want := `malformed Kafka offset JSON: topic "events": partition key "zero" is not a partition number`
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestOffsetsPartitionsSorted(t *testing.T) {
	o := merge(offs("b", 10, 1, 2, 1), offs("a", 1, 1))
	want := []offsets.Partition{{Topic: "a", Partition: 1}, {Topic: "b", Partition: 2}, {Topic: "b", Partition: 10}}
	if got := o.Partitions(); !slices.Equal(got, want) {
		t.Errorf("Partitions() = %v, want %v", got, want)
	}
}

// TestParseOffsetJSONErrorsQuoteTopics: a partition named in an error
// about its offset is quoted when it needs escapes (offsets.QuoteName),
// so the reader sees where the name ends; the error keeps it raw, and the
// line printed from it (record.String, once, at the edge) shows it
// escaped, with no control byte.
func TestParseOffsetJSONErrorsQuoteTopics(t *testing.T) {
	evil := `e\u001b]0;PWNED\u0007\u009b2J`
	for _, in := range []string{
		`{"` + evil + `":{"0":"5"}}`,
		`{"` + evil + `":{"0":1.5}}`,
		`{"` + evil + `":{"0":-3}}`,
		`{"` + evil + `":{"1":1,"01":2}}`,
	} {
		_, err := ParseOffsetJSON([]byte(in))
		if err == nil {
			t.Fatalf("ParseOffsetJSON(%s) accepted it", in)
		}
		if !strings.Contains(err.Error(), "\"e\x1b]0;PWNED\x07\u009b2J[") {
			t.Errorf("ParseOffsetJSON(%s): error %q does not quote the topic", in, err)
		}
		line := record.String(err.Error())
		if strings.ContainsAny(line, "\x1b\x07\u009b") || !strings.Contains(line, `"e\x1b]0;PWNED\x07\u009b2J[`) {
			t.Errorf("ParseOffsetJSON(%s): printed as %q", in, line)
		}
	}
	err := checkResolved(Offsets{{Topic: "e\x1b[2J", Partition: 0}: -1})
	if err == nil || !strings.Contains(err.Error(), "\"e\x1b[2J[0]\"") {
		t.Errorf("checkResolved: %q", err)
	}
}

func TestStartingOffsetsJSON(t *testing.T) {
	for _, tc := range []struct {
		name       string
		next       Offsets
		partitions map[string]int32
		want       string
	}{
		{"FORMAT.md export example", offs(topic243, 2, 3, 4, 3, 1, 3, 3, 3, 0, 3), map[string]int32{topic243: 5},
			`{"spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62":{"0":3,"1":3,"2":3,"3":3,"4":3}}`},
		{"partitions added since the checkpoint get -2", offs("t", 0, 7, 1, 8), map[string]int32{"t": 4},
			`{"t":{"0":7,"1":8,"2":-2,"3":-2}}`},
		{"a topic the checkpoint lacks gets -2", offs("b", 0, 1), map[string]int32{"a": 2, "b": 1},
			`{"a":{"0":-2,"1":-2},"b":{"0":1}}`},
		{"nil partitions keeps next, sorted numerically", offs("t", 10, 1, 9, 2, 0, 3), nil,
			`{"t":{"0":3,"9":2,"10":1}}`},
		{"partitions beyond the count are kept", offs("t", 5, 1), map[string]int32{"t": 1},
			`{"t":{"0":-2,"5":1}}`},
		{"empty", nil, map[string]int32{"gone": 0}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StartingOffsetsJSON(tc.next, tc.partitions); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEndingOffsetsJSON(t *testing.T) {
	got := EndingOffsetsJSON(offs("t", 1, 100), map[string]int32{"t": 3})
	if want := `{"t":{"0":-1,"1":100,"2":-1}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStartingOffsetsJSONRoundTrip(t *testing.T) {
	next := merge(offs("events", 0, 42, 2, 9007199254740993), offs("audit", 0, 0))
	partitions := map[string]int32{"events": 4, "audit": 1, "new-topic": 2}
	got, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(next, partitions)))
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(next)
	maps.Copy(want, offs("events", 1, OffsetEarliest, 3, OffsetEarliest))
	maps.Copy(want, offs("new-topic", 0, OffsetEarliest, 1, OffsetEarliest))
	sameOffsets(t, "round trip", got, want)
}

func TestStartingOffsetsJSONFromFixture(t *testing.T) {
	c := openFixture(t, kafka243)
	pos := mustCommitted(t, c, -1)
	got, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(pos.Offsets, map[string]int32{topic243: 7})))
	if err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "exported", got, offs(topic243, 0, 3, 1, 3, 2, 3, 3, 3, 4, 3, 5, -2, 6, -2))
}

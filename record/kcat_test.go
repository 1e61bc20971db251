package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestKcatEncoder(t *testing.T) {
	ts := time.UnixMilli(1796153121380)
	hdr := func(kv ...[]byte) []*Header {
		var hs []*Header
		for i := 0; i < len(kv); i += 2 {
			hs = append(hs, &Header{Key: kv[i], Value: kv[i+1]})
		}
		return hs
	}
	cases := []struct {
		name   string
		m      Record
		leader func(string, int32) int32
		want   string
	}{
		{"text, headers, a leader", Record{Topic: "events", Partition: 1, Offset: 1506, Timestamp: ts,
			Key: []byte("kk"), Value: []byte(`{"seq":1}`), Headers: hdr([]byte("a"), []byte("b"), []byte("c"), nil)},
			func(string, int32) int32 { return 3 },
			`{"topic":"events","partition":1,"offset":1506,"tstype":"create","ts":1796153121380,"broker":3,"headers":["a","b","c",null],"key":"kk","payload":"{\"seq\":1}"}`},
		{"the broker's time (LogAppendTime)", Record{Topic: "t", Offset: 7, Timestamp: ts, LogAppendTime: true}, nil,
			`{"topic":"t","partition":0,"offset":7,"tstype":"logappend","ts":1796153121380,"broker":-1,"key":null,"payload":null}`},
		{"null key and payload, no headers, no leader", Record{Topic: "t", Offset: 7, Timestamp: ts}, nil,
			`{"topic":"t","partition":0,"offset":7,"tstype":"create","ts":1796153121380,"broker":-1,"key":null,"payload":null}`},
		{"no timestamp (message format v0): no tstype, no ts", Record{Topic: "t", Key: []byte{}, Value: []byte{}}, nil,
			`{"topic":"t","partition":0,"offset":0,"broker":-1,"key":"","payload":""}`},
		{"binary key and payload become _b64", Record{Topic: "t", Timestamp: ts, Key: []byte{0xc3, 0x28}, Value: []byte{0xff, 0xfe, 0, 1}}, nil,
			`{"topic":"t","partition":0,"offset":0,"tstype":"create","ts":1796153121380,"broker":-1,"key_b64":"wyg=","payload_b64":"//4AAQ=="}`},
		{"a binary header makes every header base64", Record{Topic: "t", Timestamp: ts, Value: []byte("v"),
			Headers: hdr([]byte("ok"), []byte("x"), []byte{0xff}, nil)}, nil,
			`{"topic":"t","partition":0,"offset":0,"tstype":"create","ts":1796153121380,"broker":-1,"headers_b64":["b2s=","eA==","/w==",null],"key":null,"payload":"v"}`},
		{"terminal controls are escaped everywhere", Record{Topic: "t\x1b", Timestamp: ts, Key: []byte("\x1b[2J"), Value: []byte("a\u202eb"),
			Headers: hdr([]byte("\x07h"), []byte("\u009bv"))}, nil,
			`{"topic":"t\u001b","partition":0,"offset":0,"tstype":"create","ts":1796153121380,"broker":-1,"headers":["\u0007h","\u009bv"],"key":"\u001b[2J","payload":"a\u202eb"}`},
	}
	for _, c := range cases {
		e := &KcatEncoder{Leader: c.leader}
		got := string(e.Append(nil, &c.m))
		if got != c.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		if !json.Valid([]byte(got)) || !utf8.ValidString(got) || strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("%s: not valid, terminal-safe JSON: %q", c.name, got)
		}
	}
}

// TestKcatEncoderAsksLeaderPerPartitionRun: the leader is looked up once
// per run of one partition's records, again when the partition changes.
func TestKcatEncoderAsksLeaderPerPartitionRun(t *testing.T) {
	var asked []int32
	e := &KcatEncoder{Leader: func(_ string, p int32) int32 { asked = append(asked, p); return p + 10 }}
	var buf []byte
	for _, p := range []int32{0, 0, 0, 1, 1, 0} {
		buf = e.Append(buf, &Record{Topic: "t", Partition: p})
	}
	if len(asked) != 3 || asked[0] != 0 || asked[1] != 1 || asked[2] != 0 {
		t.Errorf("asked %v, want [0 1 0]", asked)
	}
	if strings.Count(string(buf), `"broker":10`) != 4 || strings.Count(string(buf), `"broker":11`) != 2 {
		t.Errorf("brokers:\n%s", buf)
	}
}

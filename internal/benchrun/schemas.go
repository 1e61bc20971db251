package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// schemaValues turns the data set's values into records of a schema
// registered in an in-process registry (-values avro|protobuf|jsonschema):
// the same seq and payload, in the Confluent wire format. The registry
// lives as long as benchrun; the decode contenders pass the URL of a
// proxy in front of it that counts the requests, so a run that asks the
// registry more than once per schema id shows.
type schemaValues struct {
	format string
	id     int
	reg    *srfake.Registry
	proxy  *httptest.Server
	asked  atomic.Int64 // requests the proxy passed on
}

const (
	benchAvro  = `{"type":"record","name":"Bench","namespace":"bench","fields":[{"name":"seq","type":"long"},{"name":"payload","type":"string"}]}`
	benchProto = "syntax = \"proto3\";\npackage bench;\nmessage Bench {\n  int64 seq = 1;\n  string payload = 2;\n}\n"
	benchJSON  = `{"type":"object","properties":{"seq":{"type":"integer"},"payload":{"type":"string"}},"required":["seq","payload"]}`
)

// newSchemaValues starts the registry and registers the format's schema;
// nil for "json" (plain JSON values, no registry).
func newSchemaValues(format string) (*schemaValues, error) {
	s := sr.Schema{}
	switch format {
	case "json":
		return nil, nil
	case "avro":
		s.Schema, s.Type = benchAvro, sr.TypeAvro
	case "protobuf":
		s.Schema, s.Type = benchProto, sr.TypeProtobuf
	case "jsonschema":
		s.Schema, s.Type = benchJSON, sr.TypeJSON
	default:
		return nil, fmt.Errorf("-values %q: want json, avro, protobuf or jsonschema", format)
	}
	reg := srfake.New()
	id, _, err := reg.RegisterSchema("bench-value", s)
	if err != nil {
		reg.Close()
		return nil, err
	}
	v := &schemaValues{format: format, id: id, reg: reg}
	target, err := url.Parse(reg.URL())
	if err != nil {
		reg.Close()
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	v.proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.asked.Add(1)
		rp.ServeHTTP(w, r)
	}))
	return v, nil
}

// close stops the proxy and the registry.
func (v *schemaValues) close() {
	v.proxy.Close()
	v.reg.Close()
}

// requests is how many requests reached the registry so far.
func (v *schemaValues) requests() int64 { return v.asked.Load() }

// shape is sh with its values in v's format (sh itself when v is nil):
// the random part of {"seq":N,"payload":"…"} becomes the payload field.
func (v *schemaValues) shape(sh shape) shape {
	if v == nil {
		return sh
	}
	text := sh.record
	sh.title = fmt.Sprintf("%d B %s records (Confluent wire format)", sh.size, v.format)
	sh.record = func(rng *rand.Rand, seq int) *kgo.Record {
		r := text(rng, seq)
		head := len(`{"seq":`) + len(strconv.Itoa(seq)) + len(`,"payload":"`)
		r.Value = v.encode(seq, r.Value[head:len(r.Value)-2])
		return r
	}
	return sh
}

// url is the registry's URL (its counting proxy's).
func (v *schemaValues) url() string { return v.proxy.URL }

// encode is the framed record of seq and payload (a JSON value's random
// part), about as long as the JSON value.
func (v *schemaValues) encode(seq int, payload []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(v.id))
	switch v.format {
	case "avro":
		out = binary.AppendVarint(out, int64(seq)) // Avro longs are zigzag varints, as Go's
		out = binary.AppendVarint(out, int64(len(payload)))
		return append(out, payload...)
	case "protobuf":
		out = append(out, 0) // message indexes [0]: the first message
		out = append(out, 0x08)
		out = binary.AppendUvarint(out, uint64(seq))
		out = append(out, 0x12)
		out = binary.AppendUvarint(out, uint64(len(payload)))
		return append(out, payload...)
	}
	out = fmt.Appendf(out, `{"seq":%d,"payload":"`, seq)
	out = append(out, payload...)
	return append(out, `"}`...)
}

// checkDecoded fails a replay --decode sample that did not measure
// decoding: kbatch warned that records did not decode (the registry
// unreachable, an unknown id: the run then timed the error path), or it
// asked the registry for more than the one schema id's text and versions.
func checkDecoded(s sample, asked int64) sample {
	if s.err != nil {
		return s
	}
	if i := strings.Index(s.stderr, "kbatch: warning:"); i >= 0 {
		s.err = fmt.Errorf("records did not decode: %s", strings.SplitN(s.stderr[i:], "\n", 2)[0])
	} else if asked > 2 {
		s.err = fmt.Errorf("asked the registry %d times for one schema id; want at most 2 (its schema and its versions)", asked)
	}
	return s
}

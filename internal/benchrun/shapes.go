package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// shape is a kind of data a matrix row fills its topic with: the records
// and how the producer batches and compresses them.
type shape struct {
	name  string // the row's name, for -matrix
	title string // what the table says
	size  int    // value bytes
	// record makes record seq; rng is the fill's own.
	record func(rng *rand.Rand, seq int) *kgo.Record
	codec  string // "" (snappy), none, gzip, lz4, zstd
	// linger and batchMax are the producer's; small batches are linger 0
	// and batchMax of a few records.
	linger   time.Duration
	batchMax int32
	// hot puts every record on partition 0: the others stay empty, as
	// idle partitions beside a busy one on the same broker.
	hot bool
}

// shapes are the rows of the data-shape matrix, in order. The
// bench's own 200 B text rows (-records) are the text JSON, snappy,
// large-batch case, so the matrix does not repeat it.
var shapes = []shape{
	{name: "bin200", title: "200 B random binary", size: 200, record: binaryRecord(200)},
	{name: "avro1k", title: "1 KiB Avro-like (binary, short strings)", size: 1024, record: avroRecord(1024)},
	{name: "tiny16", title: "16 B tiny values with keys", size: 16, record: tinyRecord},
	{name: "text10k", title: "10 KiB text JSON", size: 10 << 10, record: textRecord(10 << 10)},
	{name: "bin1m", title: "1 MiB random binary", size: 1 << 20, record: binaryRecord(1 << 20), batchMax: 4 << 20},
	{name: "headers10", title: "200 B text JSON, 10 headers per record", size: 200, record: headerRecord(200, 10)},
	{name: "none", title: "200 B text JSON, uncompressed", size: 200, record: textRecord(200), codec: "none"},
	{name: "gzip", title: "200 B text JSON, gzip", size: 200, record: textRecord(200), codec: "gzip"},
	{name: "lz4", title: "200 B text JSON, lz4", size: 200, record: textRecord(200), codec: "lz4"},
	{name: "zstd", title: "200 B text JSON, zstd", size: 200, record: textRecord(200), codec: "zstd"},
	{name: "small-batches", title: "200 B text JSON, small producer batches (linger 0, ≤ 2 KiB: ~8 records)", size: 200,
		record: textRecord(200), linger: -1, batchMax: 2 << 10},
	{name: "hot", title: "200 B text JSON, all on one partition (the other two idle)", size: 200, record: textRecord(200), hot: true},
}

// textShape is the bench's own rows: 200 B (or -size) text JSON, snappy,
// batches of up to 1 MiB.
func textShape(size int, repetitive bool) shape {
	return shape{name: "text", title: fmt.Sprintf("%d B text JSON", size), size: size,
		record: func(rng *rand.Rand, seq int) *kgo.Record {
			return &kgo.Record{Key: []byte("user-" + strconv.Itoa(seq%1000)), Value: valueFor(rng, seq, size, repetitive)}
		}}
}

// pickShapes resolves -matrix: "all", "none"/"" or names.
func pickShapes(list string) ([]shape, error) {
	switch list {
	case "", "none":
		return nil, nil
	case "all":
		return shapes, nil
	}
	var out []shape
	for _, n := range strings.Split(list, ",") {
		if strings.TrimSpace(n) == "" {
			continue
		}
		found := false
		for _, s := range shapes {
			if s.name == strings.TrimSpace(n) {
				out, found = append(out, s), true
			}
		}
		if !found {
			var names []string
			for _, s := range shapes {
				names = append(names, s.name)
			}
			return nil, fmt.Errorf("-matrix: no row %q (rows: all, none, %s)", n, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// The matrix's rows by default (-matrix-mb, -matrix-max-records): 200 MiB
// of values, at most a million records.
const (
	defaultMatrixMB  = 200
	defaultMatrixMax = 1_000_000
)

// matrixRecords is how many records a row gets: mb MiB of values, at
// most maxRecords, at least 100.
func matrixRecords(s shape, mb, maxRecords int) int {
	return max(100, min(maxRecords, mb<<20/s.size))
}

func textRecord(size int) func(*rand.Rand, int) *kgo.Record {
	return func(rng *rand.Rand, seq int) *kgo.Record {
		return &kgo.Record{Key: []byte("user-" + strconv.Itoa(seq%1000)), Value: value(rng, seq, size)}
	}
}

// binaryRecord values are random bytes: not UTF-8, incompressible.
func binaryRecord(size int) func(*rand.Rand, int) *kgo.Record {
	return func(rng *rand.Rand, seq int) *kgo.Record {
		v := make([]byte, size)
		for i := 0; i < size; i += 8 {
			u := rng.Uint64()
			for j := i; j < min(size, i+8); j++ {
				v[j] = byte(u)
				u >>= 8
			}
		}
		return &kgo.Record{Key: []byte("user-" + strconv.Itoa(seq%1000)), Value: v}
	}
}

// avroRecord values look like Avro's binary encoding of a wide record:
// zigzag varint longs, doubles, booleans and short length-prefixed
// strings (ids, names, enum-like words), about a quarter of the bytes
// printable.
func avroRecord(size int) func(*rand.Rand, int) *kgo.Record {
	words := []string{"eu-west-1", "us-east-2", "checkout", "login", "sensor", "ok", "retry", "mobile", "web"}
	return func(rng *rand.Rand, seq int) *kgo.Record {
		v := make([]byte, 0, size+32)
		v = append(v, 0, 0, 0, 0, 1) // a Confluent-style schema id prefix
		for len(v) < size {
			switch rng.IntN(5) {
			case 0, 1: // long
				n := rng.Int64() >> rng.IntN(60)
				v = appendZigzag(v, n)
			case 2: // double
				u := rng.Uint64()
				for range 8 {
					v = append(v, byte(u))
					u >>= 8
				}
			case 3: // short string
				w := words[rng.IntN(len(words))]
				v = appendZigzag(v, int64(len(w)))
				v = append(v, w...)
			case 4: // boolean, or a union branch
				v = append(v, byte(rng.IntN(2)))
			}
		}
		return &kgo.Record{Key: []byte("user-" + strconv.Itoa(seq%1000)), Value: v[:size]}
	}
}

func appendZigzag(b []byte, n int64) []byte {
	u := uint64(n<<1) ^ uint64(n>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// tinyRecord is a 16 B value with a key, as a counter or a flag topic
// carries.
func tinyRecord(rng *rand.Rand, seq int) *kgo.Record {
	v := make([]byte, 0, 16)
	v = append(v, `{"n":`...)
	v = strconv.AppendInt(v, int64(rng.IntN(1e9)), 10)
	for len(v) < 15 {
		v = append(v, ' ')
	}
	v = append(v[:15], '}')
	return &kgo.Record{Key: []byte("device-" + strconv.Itoa(seq%10000)), Value: v}
}

// headerRecord is a text record with n headers of about 20 B each, as
// tracing and schema metadata add.
func headerRecord(size, n int) func(*rand.Rand, int) *kgo.Record {
	names := []string{"traceparent", "tracestate", "content-type", "schema-id", "source", "correlation-id", "tenant", "region", "attempt", "produced-by"}
	return func(rng *rand.Rand, seq int) *kgo.Record {
		r := &kgo.Record{Key: []byte("user-" + strconv.Itoa(seq%1000)), Value: value(rng, seq, size)}
		for i := range n {
			hv := make([]byte, 0, 20)
			hv = append(hv, "v-"...)
			for len(hv) < 20 {
				hv = append(hv, hexDigits[rng.IntN(16)])
			}
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: names[i%len(names)], Value: hv})
		}
		return r
	}
}

package kafka

import (
	"bytes"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// The record batches of this package's tests (testkafka writes them as
// Kafka does).

type (
	tbatch = testkafka.Batch
	trec   = testkafka.Rec
)

// rbatch builds a record batch at first with records at the given offset
// deltas and a last offset delta of last.
func rbatch(first int64, last int32, pid int64, txn bool, deltas ...int64) []byte {
	offs := make([]int64, len(deltas))
	for i, d := range deltas {
		offs[i] = first + d
	}
	b := testkafka.At(first, first+int64(last), offs...)
	b.ProducerID, b.Transactional = pid, txn
	return b.Encode()
}

func plainBatch(first int64, n int) []byte {
	return rbatch(first, int32(n-1), -1, false, seqDeltas(n)...)
}

func txn(first int64, n int, pid int64) []byte {
	return rbatch(first, int32(n-1), pid, true, seqDeltas(n)...)
}

func seqDeltas(n int) []int64 {
	d := make([]int64, n)
	for i := range d {
		d[i] = int64(i)
	}
	return d
}

func marker(at int64, pid int64, commit bool) []byte {
	typ := byte(0)
	if commit {
		typ = 1
	}
	return tbatch{First: at, ProducerID: pid, Transactional: true, Control: true, FirstTS: 1000, MaxTS: 1000,
		Records: []trec{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 0}}}}.Encode()
}

var legacy = testkafka.Legacy

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

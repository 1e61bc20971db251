package offsets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// editAll returns b with every occurrence of old replaced by new: the live
// value, and copies of older transactions left in free pages.
func editAll(t *testing.T, b, old, new []byte) []byte {
	t.Helper()
	if !bytes.Contains(b, old) {
		t.Fatalf("%x is not in the store", old)
	}
	return bytes.ReplaceAll(b, old, new)
}

// storeWithAckedBatch makes a store whose stream "events" acked one batch
// ending events[0] at 1017 and events[1] at 500.
func storeWithAckedBatch(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "offsets.db")
	s := mustOpen(t, path)
	mustEnsure(t, s, "events")
	b := Batch{ID: 1, Time: testNow, Ranges: []BatchRange{
		{Range: Range{Partition: ev(0), From: 0, Until: 1017}, Records: 1017},
		{Range: Range{Partition: ev(1), From: 0, Until: 500}, Records: 500}}}
	must(t, s.Plan("events", b))
	must(t, s.Ack("events", 1, testNow))
	must(t, s.Close())
	return path
}

// TestStoreRefusesAnEditedNextOffset edits one byte of a stored next offset
// (1017 → 1273, as a stray write would): the start must not take 1273 as
// stored, but refuse with one line naming the stream, the partition, the
// value read and where the last acked batch ended it.
func TestStoreRefusesAnEditedNextOffset(t *testing.T) {
	path := storeWithAckedBatch(t)
	b := editAll(t, readBytes(t, path), offsetValue(1017), offsetValue(1273))
	writeBytes(t, path, b)
	for _, ro := range []bool{false, true} {
		s, err := Open(path, OpenOptions{ReadOnly: ro})
		if err != nil {
			t.Fatalf("read-only %v: Open refused the store (offsets set must be able to mend it): %v", ro, err)
		}
		info, _, err := s.Stream("events")
		_ = s.Close()
		var sum *ChecksumError
		if !errors.As(err, &sum) || !errors.Is(err, ErrChecksum) {
			t.Fatalf("read-only %v: Stream = next %v, error %v; want a ChecksumError", ro, info.Next, err)
		}
		if sum.Partition != ev(0) || sum.Stored != 1273 || sum.AckedBatch != 1 || sum.AckedUntil != 1017 {
			t.Errorf("ChecksumError = %+v, want events[0] stored 1273, batch 1 ending at 1017", *sum)
		}
		msg := err.Error()
		for _, want := range []string{`stream "events"`, "events[0]", "1273", "1017", "offsets set --name events 'events:0=OFFSET'"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q does not say %q", msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("message %q is more than one line", msg)
		}
	}
}

// TestOffsetsSetMendsAnEditedNextOffset: the documented way on is storing
// the partition's next offset anew (offsets set); the other partitions keep
// theirs, and the stream starts again.
func TestOffsetsSetMendsAnEditedNextOffset(t *testing.T) {
	path := storeWithAckedBatch(t)
	b := editAll(t, readBytes(t, path), offsetValue(1017), offsetValue(1273))
	writeBytes(t, path, b)
	s := mustOpen(t, path)
	defer s.Close()
	streams, err := s.Streams()
	if err != nil || len(streams) != 1 || len(streams[0].Damaged) != 1 || streams[0].Damaged[0].Partition != ev(0) {
		t.Fatalf("Streams = %+v, %v; want events with events[0] damaged", streams, err)
	}
	if _, ok := streams[0].Next[ev(0)]; ok {
		t.Errorf("Streams lists the damaged events[0] in Next: %v", streams[0].Next)
	}
	must(t, s.SetNext("events", map[Partition]int64{ev(0): 1017}, NewEvent(testNow, CodeSet, ev(0), "offsets set")))
	info, _, err := s.Stream("events")
	if err != nil {
		t.Fatalf("Stream after offsets set: %v", err)
	}
	if info.Next[ev(0)] != 1017 || info.Next[ev(1)] != 500 || len(info.Damaged) != 0 {
		t.Errorf("Stream after offsets set = next %v, damaged %v; want events[0] 1017, events[1] 500", info.Next, info.Damaged)
	}
}

// TestEditedBatchRecordIsRefused: the batch log is sealed too; a range of
// the last acked batch edited in place (the same length of JSON) makes a
// writable open refuse the store in one line, the file unchanged.
func TestEditedBatchRecordIsRefused(t *testing.T) {
	path := storeWithAckedBatch(t)
	b := editAll(t, readBytes(t, path), []byte(`"until":1017`), []byte(`"until":1273`))
	writeBytes(t, path, b)
	s, err := Open(path, OpenOptions{})
	if err == nil {
		batches, _ := s.Batches("events", 0)
		_ = s.Close()
		t.Fatalf("a store with an edited batch opened; its log reads %+v", batches)
	}
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "batch 1 fails its checksum") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open = %v; want one line saying batch 1 fails its checksum", err)
	}
	if !bytes.Equal(readBytes(t, path), b) {
		t.Error("the refused store changed")
	}
}

// streamState renders what a start reads of every stream of the store at
// path (next offsets, jump marks, seeks, last batch, pending batch), or
// the error a reader gets.
func streamState(t testing.TB, path string) string {
	t.Helper()
	s, err := Open(path, OpenOptions{ReadOnly: true})
	if err != nil {
		return "open: " + err.Error()
	}
	defer s.Close()
	return startState(s)
}

// startState is streamState over an open store.
func startState(s *Store) string {
	streams, err := s.Streams()
	if err != nil {
		return "streams: " + err.Error()
	}
	var out strings.Builder
	for _, st := range streams {
		info, ok, err := s.Stream(st.Name)
		if err != nil || !ok {
			return "stream " + st.Name + ": " + errString(err)
		}
		pending, err := s.Pending(st.Name)
		if err != nil {
			return "pending " + st.Name + ": " + err.Error()
		}
		info.Updated = time.Time{}
		p, _ := json.Marshal(pending)
		fmt.Fprintf(&out, "%+v pending %s\n", info, p)
	}
	return out.String()
}

func errString(err error) string {
	if err == nil {
		return "not found"
	}
	return err.Error()
}

// TestDamagedPageIDIsRefusedByAReader points the streams bucket at a page
// far past the end of the file: a read-only open (offsets show) read it
// through bbolt's memory map and the process died of a fault; it is
// refused as damaged, as a writable open refuses it.
func TestDamagedPageIDIsRefusedByAReader(t *testing.T) {
	path := storeWithAckedBatch(t)
	b := readBytes(t, path)
	key := []byte("streams")
	n := 0
	for i := bytes.Index(b, key); i >= 0; i = next(b, key, i) {
		root := b[i+len(key) : i+len(key)+8]
		if !bytes.Equal(root, make([]byte, 8)) {
			copy(root, []byte{0, 0, 0, 0x40, 0, 0, 0, 0}) // little-endian page id 1<<30
			n++
		}
	}
	if n == 0 {
		t.Fatal("no streams bucket header found")
	}
	writeBytes(t, path, b)
	for _, ro := range []bool{true, false} {
		s, err := Open(path, OpenOptions{ReadOnly: ro})
		if err == nil {
			_ = s.Close()
			t.Fatalf("read-only %v: a store whose streams bucket points past the file opened", ro)
		}
		if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
			t.Errorf("read-only %v: Open = %v, want one line of ErrCorrupt", ro, err)
		}
	}
}

// next is the index of key in b after the one at i, or -1.
func next(b, key []byte, i int) int {
	j := bytes.Index(b[i+1:], key)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// storeWithJumpMark is storeWithAckedBatch after offsets set moved
// events[1] to 400: the stream keeps a jump mark for it.
func storeWithJumpMark(t *testing.T) string {
	t.Helper()
	path := storeWithAckedBatch(t)
	s := mustOpen(t, path)
	must(t, s.SetNext("events", map[Partition]int64{ev(1): 400}, NewEvent(testNow, CodeSet, ev(1), "offsets set")))
	_ = s.Close()
	return path
}

// wantCorruptStart fails the test unless a start of the store at path is
// refused with one line of ErrCorrupt; what says what started instead.
func wantCorruptStart(t *testing.T, path, what string) {
	t.Helper()
	got, err := openAndStart(path)
	if err == nil {
		t.Fatalf("%s\n%s", what, got)
	}
	if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
		t.Errorf("open and start = %v, want one line of ErrCorrupt", err)
	}
}

// TestMovedBucketGoneIsRefused renames a stream's moved bucket (one byte of
// its key): its jump marks would read as none, so the next range of a
// partition moved by offsets set or a seek would lose its jump mark. A
// sealed stream always has the bucket; without it the stream is damaged.
func TestMovedBucketGoneIsRefused(t *testing.T) {
	path := storeWithJumpMark(t)
	b := editAll(t, readBytes(t, path), []byte("moved"), []byte("moves"))
	writeBytes(t, path, b)
	wantCorruptStart(t, path, "a stream without its moved bucket starts with")
}

// TestEditedJumpMarkIsNamed: a jump mark that fails its checksum is
// refused as the jump mark, with the partition's next offset, and offsets
// set mends it.
func TestEditedJumpMarkIsNamed(t *testing.T) {
	path := storeWithJumpMark(t)
	key := partitionKey(ev(1))
	b := editAll(t, readBytes(t, path), append(key, CodeSet...), append(key, "sex"...))
	writeBytes(t, path, b)
	s := mustOpen(t, path)
	defer s.Close()
	_, _, err := s.Stream("events")
	var sum *ChecksumError
	if !errors.As(err, &sum) || !sum.Mark || sum.Partition != ev(1) || sum.Stored != 400 ||
		!strings.Contains(err.Error(), "the jump mark of events[1] fails its checksum (its next offset is 400)") {
		t.Fatalf("Stream = %v; want the jump mark of events[1] named", err)
	}
	must(t, s.SetNext("events", map[Partition]int64{ev(1): 400}, NewEvent(testNow, CodeSet, ev(1), "offsets set")))
	if info, _, err := s.Stream("events"); err != nil || info.Next[ev(1)] != 400 || info.Moved[ev(1)] != CodeSet {
		t.Errorf("after offsets set: next %v, moved %v, %v", info.Next, info.Moved, err)
	}
}

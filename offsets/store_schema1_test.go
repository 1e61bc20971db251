package offsets

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// schema1Store writes a store as kbatch wrote it before values were
// sealed (schema 1): the same buckets, values without seals.
func schema1Store(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		app, _ := tx.CreateBucket(bucketMeta)
		_ = app.Put(keyApp, []byte("kbatch"))
		_ = app.Put(keySchema, []byte("1"))
		streams, _ := tx.CreateBucket(bucketStreams)
		st, _ := streams.CreateBucket([]byte("events"))
		meta, _ := json.Marshal(streamMeta{Brokers: []string{"k:9092"}, Topics: []string{"events"}, LastBatch: 1, Updated: testNow})
		_ = st.Put(keyStreamMeta, meta)
		next, _ := st.CreateBucket(bucketNext)
		_ = next.Put(partitionKey(ev(0)), offsetValue(1017))
		_ = next.Put(partitionKey(ev(1)), offsetValue(400))
		batches, _ := st.CreateBucket(bucketBatches)
		b, _ := json.Marshal(Batch{ID: 1, Time: testNow, State: StateAcked, AckedAt: testNow, Ranges: []BatchRange{
			{Range: Range{Partition: ev(0), From: 0, Until: 1017}}, {Range: Range{Partition: ev(1), From: 0, Until: 500}}}})
		_ = batches.Put(idKey(1), b)
		events, _ := st.CreateBucket(bucketEvents)
		e, _ := json.Marshal(NewEvent(testNow, CodeSet, ev(1), "offsets set events:1=400"))
		_ = events.Put(idKey(1), e)
		moved, _ := st.CreateBucket(bucketMoved)
		return moved.Put(partitionKey(ev(1)), []byte(CodeSet))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSchema1StoreKeepsWorking: a store made before values were sealed is
// read as it is by a read-only open (nothing written), and sealed by the
// first writable open with every position, jump mark, batch and event as
// it was; from then on an edited value is refused.
func TestSchema1StoreKeepsWorking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	schema1Store(t, path)
	before := readBytes(t, path)
	check := func(label string, s *Store) {
		t.Helper()
		info, ok, err := s.Stream("events")
		if err != nil || !ok {
			t.Fatalf("%s: Stream = %v, %v", label, ok, err)
		}
		if info.Next[ev(0)] != 1017 || info.Next[ev(1)] != 400 || info.Moved[ev(1)] != CodeSet || info.LastBatch != 1 {
			t.Errorf("%s: stream = next %v, moved %v, last batch %d", label, info.Next, info.Moved, info.LastBatch)
		}
		if bs, err := s.Batches("events", 0); err != nil || len(bs) != 1 || bs[0].Ranges[0].Until != 1017 {
			t.Errorf("%s: Batches = %+v, %v", label, bs, err)
		}
		if es, err := s.Events("events", 0); err != nil || len(es) != 1 || es[0].Code != CodeSet {
			t.Errorf("%s: Events = %+v, %v", label, es, err)
		}
	}
	ro, err := Open(path, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	check("read-only", ro)
	_ = ro.Close()
	if !bytes.Equal(readBytes(t, path), before) {
		t.Fatal("a read-only open changed the schema 1 store")
	}
	rw := mustOpen(t, path)
	check("writable", rw)
	must(t, rw.Close())
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		if got := storeSchema(tx); got != sealedSchema {
			t.Errorf("schema after a writable open = %d, want %d", got, sealedSchema)
		}
		return nil
	})
	_ = db.Close()
	again, err := Open(path, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	check("sealed", again)
	_ = again.Close()

	b := readBytes(t, path)
	b = editAll(t, b, offsetValue(400), offsetValue(144))
	writeBytes(t, path, b)
	s := mustOpen(t, path)
	defer s.Close()
	if _, _, err := s.Stream("events"); !errors.Is(err, ErrChecksum) {
		t.Errorf("Stream of the sealed store with an edited next offset = %v, want ErrChecksum", err)
	}
}

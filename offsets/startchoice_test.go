package offsets

import (
	"errors"
	"path/filepath"
	"testing"
)

// The picker's start choice survives closing and opening the store, and
// needs the stream to exist.
func TestStartChoiceIsRemembered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.db")
	st := mustOpen(t, path)
	if err := st.SetStartChoice("events", "-100"); !errors.Is(err, ErrUnknownStream) {
		t.Fatalf("choice for an unknown stream: %v", err)
	}
	must(t, st.EnsureStream("events", []string{"b:9092"}, []string{"events"}))
	must(t, st.SetStartChoice("events", "@-1h"))
	must(t, st.Close())
	st = mustOpen(t, path)
	defer st.Close()
	info, ok, err := st.Stream("events")
	if err != nil || !ok || info.StartChoice != "@-1h" || info.LastBatch != 0 || len(info.Next) != 0 {
		t.Fatalf("after reopening: %+v %v %v", info, ok, err)
	}
}

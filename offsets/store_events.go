package offsets

import (
	"encoding/json"

	"github.com/kbatch-dev/kbatch/record"
)

// AddEvent appends e to the stream's event log, pruning the oldest events
// beyond the cap in the same transaction.
func (s *Store) AddEvent(stream string, e Event) error {
	return s.update(stream, func(st *streamTx) error { return st.addEvent(e, s.maxEvents) })
}

// AddEvents appends events in order in one transaction (one fsync, where
// AddEvent per event would take one each): a broker blip on many
// partitions is one write.
func (s *Store) AddEvents(stream string, es []Event) error {
	if len(es) == 0 {
		return nil
	}
	return s.update(stream, func(st *streamTx) error {
		for _, e := range es {
			if err := st.addEvent(e, s.maxEvents); err != nil {
				return err
			}
		}
		return nil
	})
}

// Events returns up to limit events (all when limit ≤ 0), newest first. An
// unknown stream has none.
func (s *Store) Events(stream string, limit int) ([]Event, error) {
	var out []Event
	err := s.view(stream, func(st *streamTx) error {
		var err error
		out, err = newestFirst[Event](st, st.events, bucketEvents, "event", limit)
		return err
	})
	return out, err
}

func (st *streamTx) addEvent(e Event, limit int) error {
	seq, err := st.events.NextSequence()
	if err != nil {
		return err
	}
	e.Message = record.CutMiddle(e.Message, MaxEventMessage)
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	key := idKey(seq)
	if err := st.events.Put(key, st.seal(bucketEvents, key, v)); err != nil {
		return err
	}
	return prune(st.events, keepFrom(seq, limit))
}

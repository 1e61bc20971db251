package cli

import (
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/tui"
)

// startStore is what the picker's start question reads and writes of the
// store.
type startStore interface {
	Stream(name string) (offsets.StreamInfo, bool, error)
	Batch(stream string, id uint64) (offsets.Batch, bool, error)
	SetStartChoice(stream, choice string) error
}

// startAsker builds the picker's start question for picked topics: the
// stream they make, what the store holds of it, and the answer to offer
// first (the one remembered for the stream, else resume when it has
// positions, else --reset). st is nil with --no-store.
func (o *watchOptions) startAsker(g *globalOptions, st startStore, storePath string) tui.StartAsker {
	return func(topics []string) tui.StartQuestion {
		q := tui.StartQuestion{Stream: streamName(g, dedupe(topics)), Reset: o.reset, Default: o.reset}
		if st == nil {
			return q
		}
		q.Remember = storePath
		info, ok, err := st.Stream(q.Stream)
		if err != nil || !ok {
			return q
		}
		if len(info.Next) > 0 {
			q.Stored, q.LastBatch, q.Default = true, info.LastBatch, tui.ChoiceResume
			if b, ok, err := st.Batch(q.Stream, info.LastBatch); err == nil && ok && !b.AckedAt.IsZero() {
				q.AckedAt = b.AckedAt.Local()
			}
		}
		if info.StartChoice != "" && (info.StartChoice != tui.ChoiceResume || q.Stored) {
			q.Default = info.StartChoice
		}
		return q
	}
}

// applyStartChoice makes the picker's answer part of the stream's
// configuration and returns the answer to remember for the next pick:
// resume keeps the stored positions (--reset for the rest); earliest or
// latest on a stream with nothing stored is --reset, and the next pick
// offers resume (the stream has positions then); any other answer is
// TOPIC=ANSWER for every topic, as -o, which wins over stored positions,
// and is offered again.
func applyStartChoice(cfg *consumer.Config, choice string, stored bool, now time.Time) (string, error) {
	if choice == "" || choice == tui.ChoiceResume {
		return choice, nil
	}
	if !stored && (strings.EqualFold(choice, "earliest") || strings.EqualFold(choice, "latest")) {
		r, err := offsets.ParseReset(strings.ToLower(choice))
		if err != nil {
			return "", usageError{err}
		}
		cfg.Reset = r
		return tui.ChoiceResume, nil
	}
	for _, t := range cfg.Topics {
		sp, err := offsets.ParseSpec(t+"="+choice, now)
		if err != nil {
			return "", err
		}
		cfg.Explicit = append(cfg.Explicit, sp)
	}
	return choice, nil
}

// rememberStartChoice keeps the answer for the stream's next pick; a store
// that cannot take it (read-only) only loses the default.
func rememberStartChoice(store consumer.Store, name, choice string) {
	if st, ok := store.(startStore); ok && choice != "" {
		_ = st.SetStartChoice(name, choice)
	}
}

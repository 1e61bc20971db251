package consumer

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Re-authentication that fails mid-stream (KIP-368: the broker
// gives each login a short session) is reported and recovers. Either the
// token provider can no longer give a token (the token command fails, the
// OIDC endpoint is down) or the broker refuses the token it gets (an
// expired token in the file); on one broker and on three. The stream must
// say so with a broker-error event naming the token failure,
// then read on by itself, losing nothing (every offset up to 30), once
// tokens are good again.
func TestReauthenticationFailureIsReportedAndRecovers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		brokers int
		refuse  bool // the broker refuses the token, else no token comes
	}{{"no token", 1, false}, {"refused token", 1, true}, {"no token, 3 brokers", 3, false}, {"refused token, 3 brokers", 3, true}} {
		t.Run(tc.name, func(t *testing.T) { testReauthFailure(t, tc.brokers, tc.refuse) })
	}
}

func testReauthFailure(t *testing.T, brokers int, refuse bool) {
	if testkafka.Real() {
		t.Skip("answers SASL itself: kfake only")
	}
	h := newHarness(t)
	if brokers > 1 {
		h.kc = testkafka.NewBrokers(t, brokers)
	}
	topic := h.topicWith("reauth", 20, 10)
	fake := h.kc.Fake
	var down atomic.Bool
	testkafka.OfferOAuthBearer(fake)
	fake.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.SessionLifetimeMillis = 300 // re-authenticate soon
		if refuse && down.Load() {
			resp.ErrorCode = 58 // SASL_AUTHENTICATION_FAILED
			msg := "token command failed: the token expired"
			resp.ErrorMessage = &msg
		}
		return resp, nil, true
	})
	tp := kafka.NewTokenProvider("OAUTHBEARER token (token_command)", func(context.Context) (string, time.Time, error) {
		if down.Load() && !refuse {
			return "", time.Time{}, errors.New("token command failed: exit status 3")
		}
		// A fresh token each time that is due for renewal at once.
		return "tok", time.Now().Add(time.Millisecond), nil
	}, nil)
	cc := kafka.ClientConfig{Brokers: h.kc.Brokers}
	cc.SASL = &kafka.SASL{Mechanism: sarama.SASLTypeOAuth, TokenProvider: tp}
	c := dial(t, cc)
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Client = c
	cfg.Reset = offsets.ResetEarliest
	s := start(t, cfg)
	defer s.Close()

	read := int64(0)
	var reported *Notice
	deadline := time.After(60 * time.Second)
	for read < 30 {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *BatchEvent:
				for _, r := range ev.Batch.Ranges {
					read = max(read, r.Until)
				}
				if read == 10 && !down.Load() {
					down.Store(true)
					h.kc.ProduceN(topic, 0, 10, 20)
				}
			case *Notice:
				t.Logf("event %s: %s", ev.Code, ev.Message)
				if ev.Code == offsets.CodeBrokerError && strings.Contains(ev.Message, "token command failed") && reported == nil {
					reported = ev
					h.kc.ProduceN(topic, 0, 10, 20)
					down.Store(false)
				}
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			t.Fatalf("after 60s: read up to %d of 30, token failure reported: %v", read, reported != nil)
		}
	}
	if reported == nil {
		t.Fatal("read every record but the token failure was never reported")
	}
}

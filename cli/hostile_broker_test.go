package cli

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// hostilePayload is what a hostile broker sends where a string is expected:
// a window title (OSC 0), a clipboard write (OSC 52), a screen clear (CSI),
// a C1 CSI and a bidi override.
const hostilePayload = "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b31m\u202eevil"

// checkNoControl fails when out holds a byte or rune a terminal would act
// on: ESC and the other C0 controls (a newline only at the end of a line
// and a tab are allowed), DEL, C1 controls and bidi overrides/isolates.
func checkNoControl(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		switch {
		case r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			t.Fatalf("%s holds the control %U at byte %d: %q", what, r, i, out)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			t.Fatalf("%s holds the bidi control %U at byte %d: %q", what, r, i, out)
		}
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c >= 0x80 && c <= 0x9f && (i == 0 || out[i-1] < 0xc0) && !continuation(out, i) {
			t.Fatalf("%s holds a raw C1 byte %#x at %d: %q", what, c, i, out)
		}
	}
}

// continuation reports whether out[i] continues a multi-byte UTF-8 rune.
func continuation(out string, i int) bool {
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if out[j] >= 0xc0 {
			return true
		}
		if out[j] < 0x80 {
			return false
		}
	}
	return false
}

// TestHostileBrokerStrings runs kbatch against a broker that answers with
// terminal escape sequences where names and messages go, and checks the raw
// bytes of stderr and stdout (docs/design.md §2.7).
func TestHostileBrokerStrings(t *testing.T) {
	t.Run("SCRAM server error", func(t *testing.T) {
		fake := testkafka.Fake(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "bob", "bob-Pa55word!"))
		fake.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			fake.KeepControl()
			resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
			resp.SASLAuthBytes = []byte("e=" + hostilePayload + ` \x1b]0;LITERAL`)
			return resp, nil, true
		})
		r := execKbatch(t, []string{"KBATCH_SASL_PASSWORD=bob-Pa55word!"}, "topics", "-b", fake.ListenAddrs()[0],
			"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "bob", "--dial-timeout", "5s")
		checkOneLine(t, r, exitFailure, []string{"PWNED"}, "bob-Pa55word!")
		checkNoControl(t, "stderr", r.stderr)
		// Escaped once: the ESC as \x1b, the server's own four characters
		// \x1b as \\x1b, so the two do not look the same.
		if !strings.Contains(r.stderr, `\x1b]0;PWNED\x07`) || !strings.Contains(r.stderr, ` \\x1b]0;LITERAL`) || strings.Contains(r.stderr, `\\x1b]0;PWNED`) {
			t.Errorf("stderr %q, want the ESC as \\x1b and the literal \\x1b doubled, once", r.stderr)
		}
	})

	t.Run("broker host name in metadata", func(t *testing.T) {
		fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
		fake.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			fake.KeepControl()
			resp := req.ResponseKind().(*kmsg.MetadataResponse)
			resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 7, Host: "pwn" + hostilePayload, Port: 9}}
			topic := kmsg.NewMetadataResponseTopic()
			topic.Topic = kmsg.StringPtr("events")
			part := kmsg.NewMetadataResponseTopicPartition()
			part.Leader = 7
			part.Replicas, part.ISR = []int32{7}, []int32{7}
			topic.Partitions = []kmsg.MetadataResponseTopicPartition{part}
			resp.Topics = []kmsg.MetadataResponseTopic{topic}
			return resp, nil, true
		})
		addr := fake.ListenAddrs()[0]
		for _, args := range [][]string{
			{"topics", "-b", addr, "--dial-timeout", "2s"},
			{"topics", "--json", "-b", addr, "--dial-timeout", "2s"},
			{"replay", "events:0:0-1", "-b", addr, "--dial-timeout", "2s"},
		} {
			r := execKbatch(t, nil, args...)
			t.Logf("kbatch %s: exit %d\nstdout %q\nstderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			checkNoControl(t, "stderr", r.stderr)
			checkNoControl(t, "stdout", r.stdout)
		}
	})

	t.Run("topic names in metadata", func(t *testing.T) {
		fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
		host, portText, err := net.SplitHostPort(fake.ListenAddrs()[0])
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(portText)
		fake.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			fake.KeepControl()
			resp := req.ResponseKind().(*kmsg.MetadataResponse)
			resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: host, Port: int32(port)}}
			for _, name := range []string{"events", "ev" + hostilePayload} {
				topic := kmsg.NewMetadataResponseTopic()
				topic.Topic = kmsg.StringPtr(name)
				part := kmsg.NewMetadataResponseTopicPartition()
				part.Replicas, part.ISR = []int32{0}, []int32{0}
				topic.Partitions = []kmsg.MetadataResponseTopicPartition{part}
				resp.Topics = append(resp.Topics, topic)
			}
			return resp, nil, true
		})
		fake.ControlKey(kmsg.ListOffsets.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			fake.KeepControl()
			return testkafka.AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), func(sp *kmsg.ListOffsetsResponseTopicPartition, _ int64) {
				sp.Offset = 3
			}), nil, true
		})
		addr := fake.ListenAddrs()[0]
		for _, args := range [][]string{
			{"topics", "-b", addr, "--dial-timeout", "5s"},
			{"topics", "--json", "-b", addr, "--dial-timeout", "5s"},
		} {
			r := execKbatch(t, nil, args...)
			t.Logf("kbatch %s: exit %d\nstdout %q\nstderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			if !strings.Contains(r.stdout+r.stderr, "PWNED") {
				t.Errorf("the hostile topic is not listed nor named: %q %q", r.stdout, r.stderr)
			}
			checkNoControl(t, "stderr", r.stderr)
			checkNoControl(t, "stdout", r.stdout)
		}
	})

	t.Run("topic name in an error", func(t *testing.T) {
		addr := fakeWithTopic(t, nil)
		r := execKbatch(t, nil, "watch", "--no-tui", "--no-store", "-b", addr, "-t", "ev"+hostilePayload, "--batches", "1")
		checkOneLine(t, r, exitUsage, []string{"PWNED"})
		checkNoControl(t, "stderr", r.stderr)
	})

	t.Run("file name in an error", func(t *testing.T) {
		dir := t.TempDir()
		name := filepath.Join(dir, "conf"+hostilePayload+".toml")
		if err := os.WriteFile(name, []byte("brokers = ["), 0o600); err != nil {
			t.Fatal(err)
		}
		r := execKbatch(t, nil, "topics", "--config", name)
		checkOneLine(t, r, exitUsage, []string{"PWNED"})
		checkNoControl(t, "stderr", r.stderr)
	})
}

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestWatchReportsAFailedReauthentication: `kbatch watch --no-tui` over
// OAUTHBEARER whose token command starts failing mid-stream (the broker
// asks for a new login every 300 ms, KIP-368) writes a broker-error event that names the token failure, and
// reads the records produced meanwhile once the command works again.
func TestWatchReportsAFailedReauthentication(t *testing.T) {
	if testkafka.Real() {
		t.Skip("answers SASL itself: kfake only")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("reauth", 1)
	fake := kc.Fake
	fake.ControlKey(kmsg.SASLHandshake.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"OAUTHBEARER"}
		return resp, nil, true
	})
	fake.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.SessionLifetimeMillis = 300
		return resp, nil, true
	})
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	token := unsecuredJWS("kbatch", time.Now().Add(10*time.Second))
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "reauth.toml", fmt.Sprintf("[clusters.r]\nbrokers = [%q]\nsasl = { mechanism = \"OAUTHBEARER\", token_command = \"cat %s\" }\n",
		kc.Brokers[0], tokFile), 0o600)
	cmd := exec.Command(kbatchBinary(t), "watch", "--no-tui", "--config", cfg, "--cluster", "r", "-t", topic,
		"--no-store", "--reset", "earliest", "--interval", "100ms")
	cmd.Env = isolatedEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan map[string]any, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines <- l
			}
		}
	}()
	kc.ProduceN(topic, 0, 10, 20)
	read, reported, broken := 0.0, false, false
	deadline := time.After(90 * time.Second)
	for read < 30 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kbatch ended: %s", stderr.String())
			}
			switch l["type"] {
			case "batch":
				for _, r := range l["ranges"].([]any) {
					read = max(read, r.(map[string]any)["until"].(float64))
				}
				if read == 10 && !broken {
					broken = true
					if err := os.Remove(tokFile); err != nil {
						t.Fatal(err)
					}
					kc.ProduceN(topic, 0, 10, 20)
				}
			case "event":
				msg, _ := l["message"].(string)
				t.Logf("event %v: %s", l["code"], msg)
				if l["code"] == "broker-error" && strings.Contains(msg, "token") && !reported {
					if n := strings.Count(msg, "OAUTHBEARER token (token_command)"); n != 1 {
						t.Errorf("the event names the token source %d times, want once: %s", n, msg)
					}
					reported = true
					kc.ProduceN(topic, 0, 10, 20)
					if err := os.WriteFile(tokFile, []byte(unsecuredJWS("kbatch", time.Now().Add(time.Hour))+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
		case <-deadline:
			t.Fatalf("after 90s: read up to %v of 30, token failure reported: %v; stderr: %s", read, reported, stderr.String())
		}
	}
}

package schema

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A registry failing as a whole while schema id 3 is fetched: id 3's
// error is its own failure; id 7, never asked, says it was not looked up
// and which id's failure stopped it, and the registry sees no request for
// it. The one outage event names id 3. The password in the registry URL
// stays out of every message, whichever way the registry fails (the
// errors of sr.Client carry the request URL with its password).
func TestRegistryErrorsNameTheirOwnID(t *testing.T) {
	big := strings.Repeat("x", maxResponse+10)
	cases := []struct {
		name    string
		fail    func(w http.ResponseWriter, r *http.Request)
		want    string
		timeout time.Duration // of one request; 0: the default 10s
	}{
		{"oversized answer", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(big)) }, "registry answer over 8388608 bytes", 0},
		// The handler never answers: the request times out whatever its
		// timeout, which is short only to keep the test short.
		{"timeout", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "registry unreachable: no answer within 200ms", 200 * time.Millisecond},
		{"bad header", rawAnswer("HTTP/1.1 200 OK\r\nno colon in this header\r\n\r\n{}"), "malformed MIME header", 0},
		{"answer cut short", rawAnswer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"schema\""), "registry unreachable: unexpected EOF", 0},
		{"server error", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"message":"store unavailable"}`, http.StatusServiceUnavailable)
		}, "registry answered 503: store unavailable", 0},
		{"not the registry's API", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>login</html>")) }, "registry answer is not JSON", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var paths []string
			var events []Event
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				c.fail(w, r)
			}))
			defer srv.Close()
			u := strings.Replace(srv.URL, "http://", "http://reader:s3cret-pw@", 1)
			shown := strings.Replace(srv.URL, "http://", "http://reader:xxxxx@", 1)
			d := newDecoder(t, Options{RegistryURL: u, Timeout: c.timeout, RetryAfter: time.Hour, Event: func(e Event) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}})
			r3 := d.Decode("t", false, frame(3, nil))
			wantFailed(t, r3, "schema id 3: ")
			wantFailed(t, r3, c.want)
			if strings.Contains(r3.Reason, "s3cret") {
				t.Errorf("reason shows the password: %q", r3.Reason)
			}
			for _, id := range []int{7, 8} {
				r := d.Decode("t", false, frame(id, nil))
				wantFailed(t, r, "schema id "+itoa(id)+" not looked up: the registry at "+shown+" failed for schema id 3 ")
				wantFailed(t, r, " ago: ")
				wantFailed(t, r, c.want)
				if r.SchemaID != id {
					t.Errorf("schema id %d in the result, want %d", r.SchemaID, id)
				}
				if strings.Contains(r.Reason, "s3cret") {
					t.Errorf("reason shows the password: %q", r.Reason)
				}
			}
			if r := d.TryDecode("t", false, frame(9, nil)); r.Status != Failed || !strings.HasPrefix(r.Reason, "schema id 9 not looked up: ") {
				t.Errorf("TryDecode of id 9 while the registry is down: %+v", r)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range paths {
				if p != "/schemas/ids/3" {
					t.Errorf("the registry was asked %s while it was down", p)
				}
			}
			if len(events) != 1 || events[0].SchemaID != 0 || !strings.Contains(events[0].Message, "failed for schema id 3: ") ||
				!strings.Contains(events[0].Message, c.want) || strings.Contains(events[0].Message, "s3cret") {
				t.Errorf("events %+v, want one outage naming schema id 3", events)
			}
		})
	}
}

// rawAnswer writes answer as the whole HTTP response, then closes the
// connection.
func rawAnswer(answer string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString(answer)
		buf.Flush()
	}
}

package objstore

import (
	"io"
	"net/http"
	"time"
)

// retryPauses are the waits before each retry of a request to GCS or
// Azure.
func retryPauses() []time.Duration {
	return []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second}
}

// retrying sends a request again when it failed on the way or the service
// answered 408, 429 or a 5xx (but 501), after each of pauses in turn — as
// cloud.google.com/go/storage and azblob do for reads. kbatch sends only
// GETs and HEADs, which are safe to repeat; the request's context bounds
// the whole.
type retrying struct {
	base   http.RoundTripper
	pauses []time.Duration
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for i := 0; ; i++ {
		res, err := t.base.RoundTrip(req)
		if i == len(t.pauses) || ctx.Err() != nil || (err == nil && !retryStatus(res.StatusCode)) {
			return res, err
		}
		if res != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			_ = res.Body.Close()
		}
		timer := time.NewTimer(t.pauses[i])
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

func retryStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	storage "google.golang.org/api/storage/v1"
)

// The requests of gcsBucket: its client, credentials, errors and retries.

// httpClient returns the client of every request, built at the first
// call: the Application Default Credentials are looked up then, so that
// opening a bucket sends nothing and a missing credential is reported by
// the read that needed it. A failed lookup is tried again next time.
func (b *gcsBucket) httpClient() (*http.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil {
		return b.client, nil
	}
	var rt http.RoundTripper = &retrying{base: b.base, pauses: b.pauses}
	if !b.anonymous {
		// Not the request's context: the token source keeps this one for
		// every refresh, long after that request is done.
		creds, err := google.FindDefaultCredentials(context.Background(), storage.DevstorageReadOnlyScope)
		if err != nil {
			return nil, credentialsError(err)
		}
		rt = &oauth2.Transport{Source: creds.TokenSource, Base: rt}
	}
	b.client = &http.Client{Transport: rt}
	return b.client, nil
}

// get sends one GET to the JSON API: path (a template of
// googleapi.Expand: "b/{bucket}/o/{object}") with query. A status other
// than 2xx is a *gcsError, a failed request a *url.Error (see failure).
func (b *gcsBucket) get(ctx context.Context, path, key string, query url.Values, header http.Header) (*http.Response, error) {
	client, err := b.httpClient()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(b.endpoint + path)
	if err != nil {
		return nil, err
	}
	googleapi.Expand(u, map[string]string{"bucket": b.name, "object": key})
	query.Set("prettyPrint", "false")
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "kbatch")
	res, err := client.Do(req)
	if err != nil {
		return nil, failure(err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer res.Body.Close()
		res.Body = io.NopCloser(io.LimitReader(res.Body, 1<<20))
		return nil, failure(googleapi.CheckResponse(res))
	}
	return res, nil
}

// getJSON sends get and decodes the answer into v.
func (b *gcsBucket) getJSON(ctx context.Context, path, key string, query url.Values, v any) error {
	res, err := b.get(ctx, path, key, query, nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		return fmt.Errorf("decoding the answer to %s: %w", res.Request.URL.Redacted(), err)
	}
	return nil
}

// errCredentials is a credential that could not be found or was refused.
type errCredentials struct{ msg string }

func (e *errCredentials) Error() string { return e.msg }

// credentialsError says what FindDefaultCredentials did not find, and
// where a credential can come from.
func credentialsError(err error) error {
	if strings.Contains(err.Error(), "could not find default credentials") {
		return &errCredentials{"no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a key file, " +
			"run gcloud auth application-default login, or run on Google Cloud (a public bucket reads with ?anonymous=true)"}
	}
	return &errCredentials{"no usable Google credentials: " + strings.TrimPrefix(err.Error(), "google: ")}
}

// failure makes err, from the client, one line that keeps what
// ErrorCode and ErrorAs look for.
func failure(err error) error {
	var api *googleapi.Error
	if errors.As(err, &api) {
		return &gcsError{api}
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		why := re.ErrorCode
		if re.ErrorDescription != "" {
			why += ": " + re.ErrorDescription
		}
		if why == "" && re.Response != nil {
			why = re.Response.Status
		}
		return &errCredentials{"Google refused the credentials: " + oneLine(why)}
	}
	return err
}

// gcsError is the service's answer to a failed request, in one line: the
// status and the service's message (googleapi.Error prints the whole JSON
// body of a failed download).
type gcsError struct{ api *googleapi.Error }

func (e *gcsError) Unwrap() error { return e.api }

func (e *gcsError) Error() string {
	s := fmt.Sprintf("Google Cloud Storage answered %d %s", e.api.Code, http.StatusText(e.api.Code))
	msg := e.api.Message
	if msg == "" {
		var reply struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal([]byte(e.api.Body), &reply) == nil {
			msg = reply.Error.Message
		}
	}
	if msg = oneLine(msg); msg != "" {
		s += ": " + msg
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// retrying sends a request again when it failed on the way or the service
// answered 408, 429 or a 5xx (but 501), after each of pauses in turn — as
// cloud.google.com/go/storage did for reads. kbatch only sends GETs,
// which are safe to repeat; the request's context bounds the whole.
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

package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// gcsReadOnlyScope is the OAuth scope kbatch asks for: reading objects.
const gcsReadOnlyScope = "https://www.googleapis.com/auth/devstorage.read_only"

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
		creds, err := google.FindDefaultCredentials(context.Background(), gcsReadOnlyScope)
		if err != nil {
			return nil, credentialsError(err)
		}
		rt = &oauth2.Transport{Source: creds.TokenSource, Base: rt}
	}
	b.client = &http.Client{Transport: rt}
	return b.client, nil
}

// get sends one GET to the JSON API: path (escaped, relative to the
// endpoint) with query. A status other than 2xx is a *serviceError (a 404
// wraps fs.ErrNotExist), a failed request a *url.Error (see failure).
func (b *gcsBucket) get(ctx context.Context, path string, query url.Values) (*http.Response, error) {
	client, err := b.httpClient()
	if err != nil {
		return nil, err
	}
	query.Set("prettyPrint", "false")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint+path+"?"+query.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "kbatch")
	res, err := do(client, req, newGCSError)
	if err != nil {
		return nil, failure(err)
	}
	return res, nil
}

// getJSON sends get and decodes the answer into v.
func (b *gcsBucket) getJSON(ctx context.Context, path string, query url.Values, v any) error {
	res, err := b.get(ctx, path, query)
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

// failure makes a refused credential, from the client, one line.
func failure(err error) error {
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

// newGCSError is the service's answer to a failed request: the status and
// the service's message, not the whole JSON body.
func newGCSError(res *http.Response, body []byte) error {
	return &serviceError{service: "Google Cloud Storage", status: res.StatusCode, message: jsonReplyMessage(body)}
}

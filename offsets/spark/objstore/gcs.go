package objstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// gcsBucket reads a Google Cloud Storage bucket through its JSON API: three
// GETs (list, object metadata, media) over net/http, with
// golang.org/x/oauth2/google's Application Default Credentials. It stands
// in for Google's clients: cloud.google.com/go/storage links gRPC with xDS
// and envoy's protos — 20 MB of binary and about 13 MiB of resident memory
// in every kbatch process — and the generated google.golang.org/api/storage/v1,
// even used for its types alone, links Google's transport stack with gRPC
// and OpenTelemetry (google.golang.org/api/option, transport/http).
// golang.org/x/oauth2/google, which finds the credentials, costs 0.22 MB.
//
// Keys are sent as they are: Spark's GCS connector writes them so, and
// gcsblob's escaping (of "../" and line breaks) only mattered for keys it
// had written itself.
//
// Its methods may be called concurrently.
type gcsBucket struct {
	name string
	// endpoint is the JSON API's base URL, ending in "/storage/v1/".
	endpoint string
	// anonymous sends no credentials: anonymous=true, or an emulator.
	anonymous bool
	base      http.RoundTripper
	// pauses are the waits before each retry of a request (retrying).
	pauses []time.Duration

	mu     sync.Mutex
	client *http.Client // built by the first request
}

// gcsEndpoint is Google's JSON API.
const gcsEndpoint = "https://storage.googleapis.com/storage/v1/"

// newGCSBucket returns the bucket name, reached at the emulator named by
// emulator (STORAGE_EMULATOR_HOST's value) when it is set, and then with
// no credentials, as cloud.google.com/go/storage does. It sends nothing.
func newGCSBucket(name string, anonymous bool, emulator string) (*gcsBucket, error) {
	b := &gcsBucket{
		name:      name,
		endpoint:  gcsEndpoint,
		anonymous: anonymous,
		base:      http.DefaultTransport,
		pauses:    retryPauses(),
	}
	if emulator != "" {
		ep, err := emulatorEndpoint(emulator)
		if err != nil {
			return nil, err
		}
		b.endpoint, b.anonymous = ep, true
	}
	return b, nil
}

// openGCS returns the bucket of a gs:// bucket URL of Translate's, whose
// query it has checked.
func openGCS(u *url.URL) (*gcsBucket, error) {
	anonymous, _ := strconv.ParseBool(u.Query().Get("anonymous"))
	return newGCSBucket(u.Host, anonymous, os.Getenv("STORAGE_EMULATOR_HOST"))
}

// emulatorEndpoint is the JSON API of the emulator at host: "host:port"
// (plain HTTP) or a URL, whose path is replaced — what
// cloud.google.com/go/storage makes of STORAGE_EMULATOR_HOST.
func emulatorEndpoint(host string) (string, error) {
	u := &url.URL{Scheme: "http", Host: host}
	if strings.Contains(host, "://") {
		var err error
		if u, err = url.Parse(host); err != nil || u.Host == "" {
			return "", fmt.Errorf("STORAGE_EMULATOR_HOST=%s: want HOST:PORT or http://HOST:PORT", offsets.QuoteName(host))
		}
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/storage/v1/", "", "", ""
	return u.String(), nil
}

// gcsObjects is the answer to a listing (the fields asked for).
type gcsObjects struct {
	NextPageToken string       `json:"nextPageToken"`
	Prefixes      []string     `json:"prefixes"`
	Items         []*gcsObject `json:"items"`
}

// gcsObject is an object's metadata (the fields kbatch reads).
type gcsObject struct {
	Name    string `json:"name"`
	Updated string `json:"updated"`
}

// list lists one page of names under prefix, the "folders" under '/'
// among them (dir).
func (b *gcsBucket) list(ctx context.Context, prefix, token string, pageSize int) ([]object, string, error) {
	q := url.Values{"fields": {"nextPageToken,prefixes,items(name,updated)"}, "delimiter": {"/"}}
	pageParams{prefix: "prefix", size: "maxResults", token: "pageToken"}.set(q, prefix, pageSize, token)
	var res gcsObjects
	if err := b.getJSON(ctx, "b/"+url.PathEscape(b.name)+"/o", q, &res); err != nil {
		return nil, "", err
	}
	var objs []object
	for _, o := range res.Items {
		objs = append(objs, object{key: o.Name, modTime: parseTime(o.Updated)})
	}
	for _, p := range res.Prefixes {
		objs = append(objs, object{key: p, dir: true})
	}
	return objs, res.NextPageToken, nil
}

// objectPath is the JSON API's path of key: the name is one path segment,
// its slashes escaped.
func (b *gcsBucket) objectPath(key string) string {
	return "b/" + url.PathEscape(b.name) + "/o/" + url.PathEscape(key)
}

// stat looks key up with one metadata request.
func (b *gcsBucket) stat(ctx context.Context, key string) (time.Time, error) {
	var o gcsObject
	if err := b.getJSON(ctx, b.objectPath(key), url.Values{"fields": {"name,updated"}}, &o); err != nil {
		return time.Time{}, err
	}
	return parseTime(o.Updated), nil
}

// read reads key with one media request. The size is the object's, or -1
// when the service did not say (a gzip object served decompressed).
func (b *gcsBucket) read(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	res, err := b.get(ctx, b.objectPath(key), url.Values{"alt": {"media"}})
	if err != nil {
		return nil, 0, err
	}
	return res.Body, res.ContentLength, nil
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

package objstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
	storage "google.golang.org/api/storage/v1"

	"github.com/kbatch-dev/kbatch/offsets"
)

// gcsBucket reads a Google Cloud Storage bucket through its JSON API: a
// read-only gocloud.dev driver.Bucket, so that Open wraps it in a
// *blob.Bucket like the other stores. It stands in for
// gocloud.dev/blob/gcsblob, whose client (cloud.google.com/go/storage)
// links gRPC with xDS and envoy's protos into every kbatch process — 20 MB
// of binary and about 13 MiB of resident memory — for one URL scheme.
//
// The answers are decoded into the types of Google's generated client
// (google.golang.org/api/storage/v1) and its errors are googleapi's, but
// the three GETs are sent here: the generated Service is built by
// storage.NewService, which links Google's transport stack
// (google.golang.org/api/transport/http) only to be handed this client,
// and that costs every kbatch process about 6 MiB more (measured).
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
		pauses:    []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second},
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

// openGCS returns the driver of a gs:// bucket URL of Translate's, whose
// query it has checked.
func openGCS(bucketURL string) (*gcsBucket, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, err
	}
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

// ListPaged lists one page of names under opts.Prefix, the "folders" under
// opts.Delimiter among them (IsDir), in key order.
func (b *gcsBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	q := url.Values{"fields": {"nextPageToken,prefixes,items(name,size,updated,md5Hash)"}}
	if opts.Prefix != "" {
		q.Set("prefix", opts.Prefix)
	}
	if opts.Delimiter != "" {
		q.Set("delimiter", opts.Delimiter)
	}
	if opts.PageSize > 0 {
		q.Set("maxResults", strconv.Itoa(opts.PageSize))
	}
	if len(opts.PageToken) > 0 {
		q.Set("pageToken", string(opts.PageToken))
	}
	if opts.BeforeList != nil {
		if err := opts.BeforeList(noAs); err != nil {
			return nil, err
		}
	}
	var res storage.Objects
	if err := b.getJSON(ctx, "b/{bucket}/o", "", q, &res); err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: []byte(res.NextPageToken)}
	for _, o := range res.Items {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Name, ModTime: parseTime(o.Updated), Size: int64(o.Size), MD5: decodeMD5(o.Md5Hash)})
	}
	for _, p := range res.Prefixes {
		page.Objects = append(page.Objects, &driver.ListObject{Key: p, IsDir: true})
	}
	// The service lists the folders after the files.
	slices.SortFunc(page.Objects, func(x, y *driver.ListObject) int { return strings.Compare(x.Key, y.Key) })
	return page, nil
}

// Attributes looks key up with one metadata request.
func (b *gcsBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	var o storage.Object
	if err := b.getJSON(ctx, "b/{bucket}/o/{object}", key, url.Values{}, &o); err != nil {
		return nil, err
	}
	etag := o.Etag
	if !strings.HasPrefix(etag, `"`) && !strings.HasPrefix(etag, `W/"`) {
		etag = strconv.Quote(etag)
	}
	return &driver.Attributes{
		CacheControl:       o.CacheControl,
		ContentDisposition: o.ContentDisposition,
		ContentEncoding:    o.ContentEncoding,
		ContentLanguage:    o.ContentLanguage,
		ContentType:        contentType(o.ContentType),
		Metadata:           o.Metadata,
		CreateTime:         parseTime(o.TimeCreated),
		ModTime:            parseTime(o.Updated),
		Size:               int64(o.Size),
		MD5:                decodeMD5(o.Md5Hash),
		ETag:               etag,
	}, nil
}

// NewRangeReader reads length bytes of key from offset (to the end when
// length < 0) with one media request. The reader's size is the object's,
// or -1 when the service did not say (a gzip object served decompressed).
func (b *gcsBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	if length == 0 { // no media request can ask for no bytes
		a, err := b.Attributes(ctx, key)
		if err != nil {
			return nil, err
		}
		if opts.BeforeRead != nil {
			if err := opts.BeforeRead(noAs); err != nil {
				return nil, err
			}
		}
		return &gcsReader{body: http.NoBody, attrs: driver.ReaderAttributes{ContentType: a.ContentType, ModTime: a.ModTime, Size: a.Size}}, nil
	}
	header := http.Header{}
	switch {
	case length > 0:
		header.Set("Range", fmt.Sprintf("bytes=%d-%d", offset, offset+length-1))
	case offset > 0:
		header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	if opts.BeforeRead != nil {
		if err := opts.BeforeRead(noAs); err != nil {
			return nil, err
		}
	}
	res, err := b.get(ctx, "b/{bucket}/o/{object}", key, url.Values{"alt": {"media"}}, header)
	if err != nil {
		return nil, err
	}
	size := res.ContentLength
	if res.StatusCode == http.StatusPartialContent {
		// "bytes FIRST-LAST/SIZE"
		cr := res.Header.Get("Content-Range")
		size = -1
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			if n, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
				size = n
			}
		}
	}
	mod, _ := http.ParseTime(res.Header.Get("Last-Modified"))
	return &gcsReader{body: res.Body, attrs: driver.ReaderAttributes{
		ContentType: contentType(res.Header.Get("Content-Type")),
		ModTime:     mod,
		Size:        size,
	}}, nil
}

// gcsReader is the body of one media request.
type gcsReader struct {
	body  io.ReadCloser
	attrs driver.ReaderAttributes
}

func (r *gcsReader) Read(p []byte) (int, error)           { return r.body.Read(p) }
func (r *gcsReader) Close() error                         { return r.body.Close() }
func (r *gcsReader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *gcsReader) As(any) bool                          { return false }

// errReadOnly answers every write: kbatch only reads.
var errReadOnly = errors.New("kbatch only reads from Google Cloud Storage")

func (b *gcsBucket) NewTypedWriter(context.Context, string, string, *driver.WriterOptions) (driver.Writer, error) {
	return nil, errReadOnly
}
func (b *gcsBucket) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return errReadOnly
}
func (b *gcsBucket) Delete(context.Context, string, *driver.DeleteOptions) error {
	return errReadOnly
}
func (b *gcsBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errReadOnly
}

// Close does nothing: the bucket shares http.DefaultTransport's connections.
func (b *gcsBucket) Close() error { return nil }

// As exposes no client type: nothing outside this file uses one.
func (b *gcsBucket) As(any) bool { return false }

// ErrorAs exposes *googleapi.Error.
func (b *gcsBucket) ErrorAs(err error, target any) bool {
	var api *googleapi.Error
	p, ok := target.(**googleapi.Error)
	if ok && errors.As(err, &api) {
		*p = api
		return true
	}
	return false
}

// ErrorCode maps the service's statuses to gocloud.dev's codes; a missing
// bucket and a missing object are both NotFound.
func (b *gcsBucket) ErrorCode(err error) gcerrors.ErrorCode {
	var api *googleapi.Error
	var creds *errCredentials
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, errReadOnly):
		return gcerrors.Unimplemented
	case errors.As(err, &creds):
		return gcerrors.PermissionDenied
	case errors.Is(err, context.Canceled):
		return gcerrors.Canceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return gcerrors.DeadlineExceeded
	case !errors.As(err, &api):
		return gcerrors.Unknown
	}
	switch api.Code {
	case http.StatusNotFound:
		return gcerrors.NotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return gcerrors.PermissionDenied
	case http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable:
		return gcerrors.FailedPrecondition
	case http.StatusBadRequest:
		return gcerrors.InvalidArgument
	case http.StatusTooManyRequests:
		return gcerrors.ResourceExhausted
	case http.StatusNotImplemented:
		return gcerrors.Unimplemented
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return gcerrors.DeadlineExceeded
	}
	if api.Code >= 500 {
		return gcerrors.Internal
	}
	return gcerrors.Unknown
}

// noAs is the asFunc of the Before* callbacks: no driver type is exposed.
func noAs(any) bool { return false }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func decodeMD5(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}

// contentType is ct, or the generic type: gocloud.dev wants one.
func contentType(ct string) string {
	if ct == "" {
		return "application/octet-stream"
	}
	return ct
}

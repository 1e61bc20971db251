// Package objstore opens a Spark checkpoint where Spark keeps it: a local
// folder, or an object store — Amazon S3 (s3://, s3a://, s3n://), Google
// Cloud Storage (gs://) and Azure Blob Storage / ADLS Gen2 (abfss://,
// abfs://, wasbs://, wasb://) — with each cloud's default credential
// chain. It only ever reads: listings, reads of whole small files and
// attribute lookups, nothing else.
//
// Each store is reached with the least code that reads it well, because
// every kbatch process (every Tab of a shell completion) maps what is
// linked: S3 over its REST API, signed by the AWS SDK's SigV4 signer with
// the SDK's credential chain, both linked anyway by MSK IAM (s3.go); GCS
// over its JSON API with golang.org/x/oauth2/google's credentials
// (gcs.go); Azure Blob over its REST API with Shared Key, SAS or
// azidentity's default credential (azure.go). gocloud.dev,
// cloud.google.com/go/storage, Google's API packages and the Azure storage
// SDK are not used outside tests: they linked gRPC, OpenTelemetry and
// arrow-go, 9.5 MB of the binary (53.0 against 43.5 MB stripped, with
// the SDK's S3 client still in; linux/amd64).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// RequestTimeout bounds one request to an object store.
const RequestTimeout = 30 * time.Second

// pageSize is how many names one listing request asks for; a Spark log
// folder holds about 100 batches (spark.sql.streaming.minBatchesToRetain)
// and as many checksum files, so one page is the rule.
const pageSize = 1000

// maxPages bounds one listing (a million names): a store that keeps
// answering "there is more" does not keep kbatch listing forever.
const maxPages = 1000

// IsURL says whether loc names an object store (scheme://...) rather than a
// local folder. A Windows drive letter ("C:\...") is not a scheme.
func IsURL(loc string) bool {
	i := strings.Index(loc, "://")
	return i > 1
}

// Store is a checkpoint: a spark.Store, closed when done.
type Store interface {
	spark.Store
	// Requests is how many requests the store has sent so far (0 for a
	// local folder, which sends none).
	Requests() int64
	Close() error
}

// Open opens the checkpoint at loc: a local folder, or an object-store URL
// (see the package doc; Translate says how each is reached). A malformed
// URL, an unknown scheme or query parameter is an *offsets.UsageError.
// Opening a bucket sends no request; the first read does.
func Open(ctx context.Context, loc string) (Store, error) {
	if !IsURL(loc) {
		s, err := spark.NewDirStore(loc)
		if err != nil {
			return nil, err
		}
		return dirStore{s}, nil
	}
	t, err := Translate(loc)
	if err != nil {
		return nil, &offsets.UsageError{Msg: err.Error()}
	}
	b, err := openBucket(ctx, t.Bucket)
	var ue *offsets.UsageError
	if errors.As(err, &ue) {
		return nil, &offsets.UsageError{Msg: fmt.Sprintf("spark checkpoint %s: %s", offsets.QuoteName(t.Location), ue.Msg)}
	}
	if err != nil {
		return nil, fmt.Errorf("spark checkpoint %s: %w", t.Location, err)
	}
	prefix := ""
	if t.Prefix != "" {
		prefix = t.Prefix + "/"
	}
	return &bucketStore{b: b, prefix: prefix, loc: t.Location}, nil
}

// openBucket opens a bucket URL of Translate's with the store's reader.
// Query parameters it does not know are a *offsets.UsageError.
func openBucket(ctx context.Context, bucketURL string) (bucket, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "s3":
		return openS3(ctx, u)
	case "gs":
		return openGCS(u)
	case "azblob":
		return openAzure(u)
	}
	return nil, fmt.Errorf("unsupported bucket scheme %q", u.Scheme)
}

// bucket is one store's bucket (container), read only. Its methods may be
// called concurrently; a missing object or bucket is an error that wraps
// fs.ErrNotExist.
type bucket interface {
	// list returns one page, of at most pageSize names, of what is
	// directly under prefix (a "folder" ending in '/', or ""), the
	// folders among them with dir set, and the token of the next page
	// ("" after the last).
	list(ctx context.Context, prefix, token string, pageSize int) ([]object, string, error)
	// read opens key with one request. size is the object's size, or -1
	// when the store did not say.
	read(ctx context.Context, key string) (body io.ReadCloser, size int64, err error)
	// stat returns key's modification time with one request.
	stat(ctx context.Context, key string) (time.Time, error)
}

// pageParams are the names a store gives the query parameters of one page
// of a listing.
type pageParams struct{ prefix, size, token string }

// set puts a page's parameters in q: the prefix when it and its name are
// not empty, the page size when positive, the token of the page when not
// empty.
func (p pageParams) set(q url.Values, prefix string, pageSize int, token string) {
	if p.prefix != "" && prefix != "" {
		q.Set(p.prefix, prefix)
	}
	if pageSize > 0 {
		q.Set(p.size, strconv.Itoa(pageSize))
	}
	if token != "" {
		q.Set(p.token, token)
	}
}

// object is one name of a listing.
type object struct {
	key     string
	dir     bool
	modTime time.Time
}

type dirStore struct{ *spark.DirStore }

func (dirStore) Requests() int64 { return 0 }
func (dirStore) Close() error    { return nil }

// Target is where a checkpoint URL is read: a bucket URL and the
// checkpoint's prefix in it.
type Target struct {
	// Location is the URL as shown in messages: scheme, bucket and path,
	// without the query.
	Location string
	// Bucket is the bucket's URL, in the form gocloud.dev's URL openers
	// take (tests write fixtures with them): "s3://bucket?region=...",
	// "gs://bucket?anonymous=true", "azblob://container?storage_account=...".
	Bucket string
	// Prefix is the checkpoint's path in the bucket, without slashes at
	// either end ("" for the bucket's root).
	Prefix string
}

// Translate maps a checkpoint URL to the bucket Open opens, in gocloud.dev's
// URL form (which Open reads with the stores' own readers):
//
//	s3://bucket/path?query   (also s3a://, s3n://) → s3://bucket?query
//	gs://bucket/path?query                         → gs://bucket?query
//	abfss://container@account.dfs.core.windows.net/path?query (also abfs://)
//	wasbs://container@account.blob.core.windows.net/path?query (also wasb://)
//	                                               → azblob://container?storage_account=account&domain=blob.core.windows.net&query
//	                                                 (no domain= when AZURE_STORAGE_DOMAIN is set: it applies)
//
// The query is gocloud.dev's, the part of it kbatch reads: for S3
// endpoint=, region=, use_path_style=true (MinIO, moto, …), profile= and
// anonymous=true (s3.go); for Azure domain=, protocol=, localemu=true
// (Azurite) and cdn=true (azure.go). For GCS it is anonymous=true (a public
// bucket, no credentials) and nothing else: gcsblob's access_id and
// private_key_path sign URLs, grpc and zonal choose gRPC, universe_domain
// leaves Google's own cloud, and kbatch does none of these. An ADLS Gen2 host (dfs.) is read through its
// Blob endpoint (blob.), which serves the same files.
func Translate(loc string) (Target, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return Target{}, fmt.Errorf("spark checkpoint %s: not a URL: %v", offsets.QuoteName(loc), errors.Unwrap(err))
	}
	prefix := strings.Trim(path.Clean("/"+u.Path), "/")
	q := u.Query()
	shown := url.URL{Scheme: u.Scheme, Host: u.Host, User: u.User, Path: "/" + prefix}
	t := Target{Location: strings.TrimSuffix(shown.Redacted(), "/"), Prefix: prefix}
	if u.Host == "" {
		return Target{}, fmt.Errorf("spark checkpoint %s: no bucket or container in the URL", offsets.QuoteName(loc))
	}
	switch strings.ToLower(u.Scheme) {
	case "s3", "s3a", "s3n":
		if u.User != nil {
			return Target{}, fmt.Errorf("spark checkpoint %s: credentials do not go in the URL; kbatch uses AWS's default credential chain", offsets.QuoteName(t.Location))
		}
		t.Bucket = (&url.URL{Scheme: "s3", Host: u.Host, RawQuery: q.Encode()}).String()
	case "gs":
		if u.User != nil {
			return Target{}, fmt.Errorf("spark checkpoint %s: credentials do not go in the URL; kbatch uses Google's default credentials", offsets.QuoteName(t.Location))
		}
		for _, k := range slices.Sorted(maps.Keys(q)) {
			v := q[k]
			if k != "anonymous" {
				return Target{}, fmt.Errorf("spark checkpoint %s: unknown query parameter %s (gs:// takes anonymous=true)", offsets.QuoteName(t.Location), offsets.QuoteName(k))
			}
			if _, err := strconv.ParseBool(v[len(v)-1]); err != nil || len(v) > 1 {
				return Target{}, fmt.Errorf("spark checkpoint %s: anonymous=%s: want anonymous=true or false, once", offsets.QuoteName(t.Location), offsets.QuoteName(strings.Join(v, ",")))
			}
		}
		t.Bucket = (&url.URL{Scheme: "gs", Host: u.Host, RawQuery: q.Encode()}).String()
	case "abfss", "abfs", "wasbs", "wasb":
		container := u.User.Username()
		host := u.Hostname()
		if _, hasPass := u.User.Password(); u.User == nil || container == "" || hasPass {
			return Target{}, fmt.Errorf("spark checkpoint %s: want %s://CONTAINER@ACCOUNT.%s/PATH", offsets.QuoteName(t.Location), u.Scheme, azureDomain(u.Scheme))
		}
		account, domain, ok := strings.Cut(host, ".")
		if !ok || account == "" {
			return Target{}, fmt.Errorf("spark checkpoint %s: want %s://CONTAINER@ACCOUNT.%s/PATH", offsets.QuoteName(t.Location), u.Scheme, azureDomain(u.Scheme))
		}
		if strings.HasPrefix(domain, "dfs.") {
			domain = "blob." + strings.TrimPrefix(domain, "dfs.")
		}
		if q.Get("storage_account") == "" {
			q.Set("storage_account", account)
		}
		// AZURE_STORAGE_DOMAIN is the default chain's endpoint (a sovereign
		// cloud, a private endpoint, Azurite): the URL's host does not
		// override it; a domain= on the URL does.
		if q.Get("domain") == "" && os.Getenv("AZURE_STORAGE_DOMAIN") == "" {
			q.Set("domain", domain)
		}
		t.Bucket = (&url.URL{Scheme: "azblob", Host: container, RawQuery: q.Encode()}).String()
	default:
		return Target{}, fmt.Errorf("spark checkpoint %s: unsupported scheme %q (want a folder, s3://, gs://, abfss:// or wasbs://)", offsets.QuoteName(t.Location), offsets.QuoteName(u.Scheme))
	}
	return t, nil
}

func azureDomain(scheme string) string {
	if strings.HasPrefix(scheme, "abfs") {
		return "dfs.core.windows.net"
	}
	return "blob.core.windows.net"
}

// bucketStore is a checkpoint in a bucket under a prefix.
type bucketStore struct {
	b        bucket
	prefix   string // "" or ending in '/'
	loc      string
	requests atomic.Int64
}

func (s *bucketStore) Location() string        { return s.loc }
func (s *bucketStore) Path(name string) string { return s.loc + "/" + name }
func (s *bucketStore) Requests() int64         { return s.requests.Load() }

// Close does nothing: the stores' clients share http.DefaultTransport's
// connections, or hold their own idle ones only.
func (s *bucketStore) Close() error { return nil }

func (s *bucketStore) err(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		err = fs.ErrNotExist
	}
	return fmt.Errorf("spark checkpoint %s: %w", s.Path(name), err)
}

// ReadFile reads name with one GET, refusing a file over limit bytes.
func (s *bucketStore) ReadFile(name string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	s.requests.Add(1)
	r, size, err := s.b.read(ctx, s.prefix+name)
	if err != nil {
		return nil, s.err(name, err)
	}
	defer r.Close()
	if size > limit {
		return nil, spark.TooLarge(s, name, limit)
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, s.err(name, err)
	}
	if int64(len(b)) > limit {
		return nil, spark.TooLarge(s, name, limit)
	}
	return b, nil
}

// ReadDir lists the folder name with a delimited listing, one request per
// page of pageSize names. An empty listing is a missing folder: object
// stores have no empty folders.
func (s *bucketStore) ReadDir(name string) ([]spark.Entry, error) {
	prefix := s.prefix
	if name != "" {
		prefix += strings.TrimSuffix(name, "/") + "/"
	}
	var out []spark.Entry
	token := ""
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, s.err(name, fmt.Errorf("the listing goes on past %d pages of %d names; not a checkpoint folder", maxPages, pageSize))
		}
		ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
		s.requests.Add(1)
		objs, next, err := s.b.list(ctx, prefix, token, pageSize)
		cancel()
		if err != nil {
			return nil, s.err(name, err)
		}
		for _, o := range objs {
			base := strings.TrimSuffix(strings.TrimPrefix(o.key, prefix), "/")
			if base == "" || strings.Contains(base, "/") {
				continue // the folder's own marker object, or not directly in it
			}
			out = append(out, spark.Entry{Name: base, Dir: o.dir, ModTime: o.modTime})
		}
		if next == "" {
			break
		}
		if next == token {
			return nil, s.err(name, errors.New("the store answered the same page token twice"))
		}
		token = next
	}
	if len(out) == 0 {
		return nil, s.err(name, fs.ErrNotExist)
	}
	return out, nil
}

// Stat looks name up with one attributes request (HEAD).
func (s *bucketStore) Stat(name string) (spark.Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	s.requests.Add(1)
	mod, err := s.b.stat(ctx, s.prefix+name)
	if err != nil {
		return spark.Entry{}, s.err(name, err)
	}
	return spark.Entry{Name: path.Base(name), ModTime: mod}, nil
}

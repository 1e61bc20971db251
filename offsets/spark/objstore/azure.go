package objstore

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// azureBucket reads an Azure Blob Storage container through the Blob
// service's REST API: List Blobs, Get Blob and Get Blob Properties, three
// GETs and a HEAD over net/http, signed with the account key (Shared Key),
// carrying a SAS, or with a token of azidentity's default credential
// (azure_auth.go).
//
// It stands in for the Azure storage SDK (azblob), whose container client
// links arrow-go (for a query feature kbatch does not use): kbatch reading
// through azblob's container client was 5.1 MB larger (47.97 MB stripped,
// against 42.86 MB with this file; measured on linux/amd64), and
// gocloud.dev's azureblob linked OpenTelemetry on top. azidentity stays
// (1.75 MB): it is the default chain users have (az login, managed and
// workload identity, AZURE_CLIENT_ID…), and signing in is not something to
// write again.
//
// Its methods may be called concurrently.
type azureBucket struct {
	// service is the account's Blob endpoint, without a trailing slash:
	// https://ACCOUNT.blob.core.windows.net, or
	// http://127.0.0.1:10000/devstoreaccount1 for Azurite.
	service   string
	container string
	auth      azureAuth
	client    *http.Client
}

// azureVersion is the REST API version kbatch speaks (x-ms-version).
const azureVersion = "2023-11-03"

// azureDomains are the storage domains a URL's domain= or
// AZURE_STORAGE_DOMAIN may name outside an emulator: Azure's public and
// sovereign clouds, as gocloud.dev's azureblob allowed. A credential is
// never sent elsewhere; an emulator must be on the loopback.
var azureDomains = []string{
	"blob.core.windows.net",
	"blob.core.usgovcloudapi.net",
	"blob.core.chinacloudapi.cn",
	"blob.core.cloudapi.de",
}

// azureSettings are what the environment and the URL say about reaching
// an account, as gocloud.dev's azureblob read them.
type azureSettings struct {
	account, domain, protocol, sas string
	cdn, emulator                  bool
}

// azureEnv reads the settings of the environment: AZURE_STORAGE_ACCOUNT,
// _DOMAIN, _PROTOCOL, _SAS_TOKEN, _IS_CDN, _IS_LOCAL_EMULATOR, and the
// account and protocol of a connection string.
func azureEnv() azureSettings {
	s := azureSettings{
		account:  os.Getenv("AZURE_STORAGE_ACCOUNT"),
		domain:   os.Getenv("AZURE_STORAGE_DOMAIN"),
		protocol: os.Getenv("AZURE_STORAGE_PROTOCOL"),
		sas:      os.Getenv("AZURE_STORAGE_SAS_TOKEN"),
	}
	s.cdn, _ = strconv.ParseBool(os.Getenv("AZURE_STORAGE_IS_CDN"))
	s.emulator, _ = strconv.ParseBool(os.Getenv("AZURE_STORAGE_IS_LOCAL_EMULATOR"))
	cs := parseConnectionString(connectionString())
	if s.account == "" {
		s.account = cs["AccountName"]
	}
	if s.protocol == "" {
		s.protocol = cs["DefaultEndpointsProtocol"]
	}
	return s
}

func connectionString() string {
	if cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		return cs
	}
	return os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING")
}

// parseConnectionString splits "Key=value;Key=value" (values may hold
// '='); a malformed part is left out.
func parseConnectionString(cs string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(strings.TrimRight(cs, ";"), ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			out[strings.TrimSpace(k)] = v
		}
	}
	return out
}

// withQuery applies an azblob:// URL's query: domain=, protocol=, cdn=,
// localemu=, storage_account=. Anything else is a usage error.
func (s azureSettings) withQuery(q url.Values) (azureSettings, error) {
	for k, vs := range q {
		if len(vs) > 1 {
			return s, &offsets.UsageError{Msg: fmt.Sprintf("%s= is given %d times", offsets.QuoteName(k), len(vs))}
		}
		v := vs[0]
		switch k {
		case "domain":
			s.domain = v
		case "protocol":
			s.protocol = v
		case "storage_account":
			s.account = v
		case "cdn", "localemu":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return s, &offsets.UsageError{Msg: fmt.Sprintf("%s=%s: want true or false", k, offsets.QuoteName(v))}
			}
			if k == "cdn" {
				s.cdn = b
			} else {
				s.emulator = b
			}
		default:
			return s, &offsets.UsageError{Msg: fmt.Sprintf("unknown query parameter %s (Azure URLs take domain, protocol, localemu and cdn)", offsets.QuoteName(k))}
		}
	}
	return s, nil
}

// serviceURL is the account's Blob endpoint: PROTOCOL://ACCOUNT.DOMAIN,
// PROTOCOL://DOMAIN/ACCOUNT for an emulator, PROTOCOL://DOMAIN for a CDN.
// http is for an emulator only, and an emulator must be on the loopback;
// otherwise the domain is one of Azure's clouds.
func (s azureSettings) serviceURL() (string, error) {
	if s.account == "" {
		return "", fmt.Errorf("no Azure storage account")
	}
	for _, r := range s.account {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return "", fmt.Errorf("storage account %s: letters and digits only", offsets.QuoteName(s.account))
		}
	}
	domain := strings.ToLower(s.domain)
	if domain == "" {
		domain = azureDomains[0]
	}
	protocol := strings.ToLower(s.protocol)
	if protocol == "" {
		protocol = "https"
	}
	switch {
	case protocol == "http" && !s.emulator:
		return "", fmt.Errorf("protocol http is for a local emulator only (AZURE_STORAGE_IS_LOCAL_EMULATOR=true or localemu=true)")
	case protocol == "https" && s.emulator:
		return "", fmt.Errorf("a local emulator speaks http (AZURE_STORAGE_PROTOCOL=http or protocol=http)")
	case protocol != "http" && protocol != "https":
		return "", fmt.Errorf("protocol %s: want https, or http for a local emulator", offsets.QuoteName(protocol))
	case s.emulator:
		if !loopback(domain) {
			return "", fmt.Errorf("local emulator %s: not a loopback address", offsets.QuoteName(domain))
		}
		return protocol + "://" + domain + "/" + s.account, nil
	}
	known := false
	for _, d := range azureDomains {
		known = known || d == domain
	}
	if !known {
		return "", fmt.Errorf("storage domain %s: not one of Azure's (%s)", offsets.QuoteName(domain), strings.Join(azureDomains, ", "))
	}
	if s.cdn {
		return protocol + "://" + domain, nil
	}
	return protocol + "://" + s.account + "." + domain, nil
}

// loopback says whether host[:port] is localhost or a loopback address.
func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// openAzure returns the container of an azblob:// URL of Translate's,
// with the credentials of the environment (azureCredentials). It sends
// nothing.
func openAzure(u *url.URL) (*azureBucket, error) {
	s, err := azureEnv().withQuery(u.Query())
	if err != nil {
		return nil, err
	}
	auth, service, err := azureCredentials(s)
	if err != nil {
		return nil, err
	}
	if service == "" {
		if service, err = s.serviceURL(); err != nil {
			return nil, err
		}
	}
	return &azureBucket{
		service:   strings.TrimSuffix(service, "/"),
		container: u.Host,
		auth:      auth,
		client:    &http.Client{Transport: &retrying{base: http.DefaultTransport, pauses: retryPauses()}},
	}, nil
}

// azureList is the answer to List Blobs (the fields kbatch reads).
type azureList struct {
	Blobs struct {
		Blob []struct {
			Name       string `xml:"Name"`
			Properties struct {
				LastModified string `xml:"Last-Modified"`
			} `xml:"Properties"`
		} `xml:"Blob"`
		BlobPrefix []struct {
			Name string `xml:"Name"`
		} `xml:"BlobPrefix"`
	} `xml:"Blobs"`
	NextMarker string `xml:"NextMarker"`
}

func (b *azureBucket) list(ctx context.Context, prefix, token string, pageSize int) ([]object, string, error) {
	q := url.Values{"restype": {"container"}, "comp": {"list"}, "delimiter": {"/"}}
	pageParams{prefix: "prefix", size: "maxresults", token: "marker"}.set(q, prefix, pageSize, token)
	res, err := b.send(ctx, http.MethodGet, "", q)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	var l azureList
	if err := xml.NewDecoder(io.LimitReader(res.Body, 64<<20)).Decode(&l); err != nil {
		return nil, "", fmt.Errorf("decoding a listing of container %s: %w", offsets.QuoteName(b.container), err)
	}
	var objs []object
	for _, o := range l.Blobs.Blob {
		mod, _ := http.ParseTime(o.Properties.LastModified)
		objs = append(objs, object{key: o.Name, modTime: mod})
	}
	for _, p := range l.Blobs.BlobPrefix {
		objs = append(objs, object{key: p.Name, dir: true})
	}
	return objs, l.NextMarker, nil
}

func (b *azureBucket) read(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	res, err := b.send(ctx, http.MethodGet, key, url.Values{})
	if err != nil {
		return nil, 0, err
	}
	return res.Body, res.ContentLength, nil
}

func (b *azureBucket) stat(ctx context.Context, key string) (time.Time, error) {
	res, err := b.send(ctx, http.MethodHead, key, url.Values{})
	if err != nil {
		return time.Time{}, err
	}
	res.Body.Close()
	mod, _ := http.ParseTime(res.Header.Get("Last-Modified"))
	return mod, nil
}

// send sends one request for the container (key "") or one blob of it. A
// status other than 2xx is a *serviceError (newAzureError).
func (b *azureBucket) send(ctx context.Context, method, key string, q url.Values) (*http.Response, error) {
	p := "/" + url.PathEscape(b.container)
	if key != "" {
		p += "/" + escapeBlobName(key)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.service+p, nil)
	if err != nil {
		return nil, err
	}
	req.URL.RawQuery = q.Encode()
	req.Header.Set("User-Agent", "kbatch")
	req.Header.Set("x-ms-version", azureVersion)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if err := b.auth.authorize(ctx, req); err != nil {
		return nil, err
	}
	return do(b.client, req, newAzureError)
}

// escapeBlobName escapes a blob name for the URL's path, keeping its
// slashes: Azure names blobs with their "folders".
func escapeBlobName(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// newAzureError is the service's answer to a failed request: the error
// code of the x-ms-error-code header (a HEAD has only that) or else of
// the XML body, and the first line of the body's message (its second line
// is the request's id and time).
func newAzureError(res *http.Response, body []byte) error {
	e := &serviceError{service: "Azure Blob Storage", status: res.StatusCode, code: res.Header.Get("x-ms-error-code")}
	if code, message, ok := xmlReply(body); ok {
		if e.code == "" {
			e.code = code
		}
		e.message, _, _ = strings.Cut(message, "\n")
	}
	return e
}

package objstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// azureAuth authorizes one request to the Blob service.
type azureAuth interface {
	authorize(ctx context.Context, req *http.Request) error
}

// azureCredentials picks the credential of the environment, in the order
// gocloud.dev's azureblob did: AZURE_STORAGE_ACCOUNT with
// AZURE_STORAGE_KEY (Shared Key); AZURE_STORAGE_SAS_TOKEN; a connection
// string (AZURE_STORAGE_CONNECTION_STRING, whose endpoint, when it names
// one, is the service: the second result); else azidentity's default
// credential (environment, workload identity, managed identity, az login,
// azd), looked up at the first request.
func azureCredentials(s azureSettings) (azureAuth, string, error) {
	account, key := os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY")
	switch {
	case account != "" && key != "":
		k, err := newSharedKey(account, key)
		return k, "", err
	case s.sas != "":
		return sasToken(strings.TrimPrefix(s.sas, "?")), "", nil
	case connectionString() != "":
		return connectionCredentials(parseConnectionString(connectionString()))
	}
	return &tokenAuth{}, "", nil
}

// connectionCredentials is the service and credential of a connection
// string: AccountName with AccountKey, or SharedAccessSignature; its
// BlobEndpoint, else https://ACCOUNT.blob.ENDPOINTSUFFIX.
func connectionCredentials(cs map[string]string) (azureAuth, string, error) {
	account := cs["AccountName"]
	service := cs["BlobEndpoint"]
	if service == "" && account != "" {
		protocol, suffix := cs["DefaultEndpointsProtocol"], cs["EndpointSuffix"]
		if protocol == "" {
			protocol = "https"
		}
		if suffix == "" {
			suffix = "core.windows.net"
		}
		service = protocol + "://" + account + ".blob." + suffix
	}
	switch {
	case service == "":
		return nil, "", errors.New("AZURE_STORAGE_CONNECTION_STRING names neither AccountName nor BlobEndpoint")
	case account != "" && cs["AccountKey"] != "":
		k, err := newSharedKey(account, cs["AccountKey"])
		return k, service, err
	case cs["SharedAccessSignature"] != "":
		return sasToken(strings.TrimPrefix(cs["SharedAccessSignature"], "?")), service, nil
	}
	return nil, "", errors.New("AZURE_STORAGE_CONNECTION_STRING holds neither AccountName with AccountKey nor SharedAccessSignature")
}

// sasToken adds a shared access signature to the request's query.
type sasToken string

func (t sasToken) authorize(_ context.Context, req *http.Request) error {
	if req.URL.RawQuery != "" {
		req.URL.RawQuery += "&"
	}
	req.URL.RawQuery += string(t)
	return nil
}

// sharedKey signs requests with the account key: Azure Storage's Shared
// Key scheme (learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key),
// as azblob's SharedKeyCredential signs them.
type sharedKey struct {
	account string
	key     []byte
}

func newSharedKey(account, key string) (*sharedKey, error) {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, errors.New("AZURE_STORAGE_KEY is not base64: want the account's access key")
	}
	return &sharedKey{account: account, key: k}, nil
}

func (k *sharedKey) authorize(_ context.Context, req *http.Request) error {
	mac := hmac.New(sha256.New, k.key)
	mac.Write([]byte(k.stringToSign(req)))
	req.Header.Set("Authorization", "SharedKey "+k.account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return nil
}

// stringToSign is what Shared Key signs: the verb, the standard headers
// (kbatch sends none of them but Range, and an empty Date since x-ms-date
// is sent), the x-ms- headers and the resource: the account, the URL's
// path as sent, and the query's parameters, sorted.
func (k *sharedKey) stringToSign(req *http.Request) string {
	h := req.Header
	length := h.Get("Content-Length")
	if length == "0" {
		length = ""
	}
	var ms []string
	for name, vs := range h {
		if n := strings.ToLower(name); strings.HasPrefix(n, "x-ms-") {
			ms = append(ms, n+":"+strings.Join(vs, ","))
		}
	}
	slices.Sort(ms)
	var res strings.Builder
	res.WriteString("/" + k.account)
	if p := req.URL.EscapedPath(); p != "" {
		res.WriteString(p)
	} else {
		res.WriteString("/")
	}
	q, _ := url.ParseQuery(req.URL.RawQuery)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range q {
			if !yield(n) {
				return
			}
		}
	}) {
		vs := slices.Sorted(slices.Values(q[name]))
		res.WriteString("\n" + strings.ToLower(name) + ":" + strings.Join(vs, ","))
	}
	return strings.Join([]string{
		req.Method,
		h.Get("Content-Encoding"), h.Get("Content-Language"), length, h.Get("Content-MD5"), h.Get("Content-Type"),
		"", // Date: x-ms-date is sent
		h.Get("If-Modified-Since"), h.Get("If-Match"), h.Get("If-None-Match"), h.Get("If-Unmodified-Since"), h.Get("Range"),
		strings.Join(ms, "\n"),
		res.String(),
	}, "\n")
}

// azureStorageScope is the OAuth scope of Azure Storage.
const azureStorageScope = "https://storage.azure.com/.default"

// tokenAuth sends a bearer token of azidentity's default credential,
// built at the first request (so that opening sends nothing and a missing
// credential is reported by the read that needed it) and kept, with its
// token, until five minutes before the token expires.
type tokenAuth struct {
	mu    sync.Mutex
	cred  *azidentity.DefaultAzureCredential
	token string
	until time.Time
}

func (a *tokenAuth) authorize(ctx context.Context, req *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == "" || time.Now().After(a.until) {
		if a.cred == nil {
			cred, err := azidentity.NewDefaultAzureCredential(nil)
			if err != nil {
				return azureCredentialsError(err)
			}
			a.cred = cred
		}
		tok, err := a.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{azureStorageScope}})
		if err != nil {
			return azureCredentialsError(err)
		}
		a.token, a.until = tok.Token, tok.ExpiresOn.Add(-5*time.Minute)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	return nil
}

// azureCredentialsError says, in one line, that no credential of the
// default chain gave a token, and where one can come from (azidentity's
// message lists every credential it tried, over many lines).
func azureCredentialsError(err error) error {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("no usable Azure credentials (%s): set AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY, "+
		"AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_CONNECTION_STRING, run az login, or run with a managed identity", oneLine(first))
}

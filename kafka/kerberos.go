package kafka

import (
	"fmt"
	"sync"

	"github.com/IBM/sarama"
	krb5client "github.com/jcmturner/gokrb5/v8/client"
)

// A process logs in to the KDC once per set of Kerberos credentials:
// every connection of every client made from them (sarama's, through
// saslDialer, the fetch client's, Another's, a second Dial's)
// authenticates with the one gokrb5 client that logged in, which holds
// the ticket-granting ticket, renews it before it expires and keeps the
// service ticket of each broker host it got. sarama's own GSSAPI would
// make a client and log in again for every connection it opens.

// kerberosKey is a set of Kerberos credentials as sarama's GSSAPI
// configuration holds them. The password stays in memory only.
type kerberosKey struct {
	configPath, realm, user, password, keytab, ccache string
	authType                                          int
	disableFAST                                       bool
}

// kerberosLogins holds the process's logged-in clients, by credentials.
var kerberosLogins struct {
	mu      sync.Mutex
	clients map[kerberosKey]*krb5client.Client
}

// kerberosLogin makes a gokrb5 client from g and logs it in to the KDC;
// tests replace it.
var kerberosLogin = func(g *sarama.GSSAPIConfig) (*krb5client.Client, error) {
	kc, err := sarama.NewKerberosClient(g)
	if err != nil {
		return nil, err
	}
	k, ok := kc.(*sarama.KerberosGoKrb5Client)
	if !ok {
		return nil, fmt.Errorf("unexpected Kerberos client %T", kc)
	}
	cl := &k.Client
	if err := cl.AffirmLogin(); err != nil {
		cl.Destroy()
		return nil, err
	}
	return cl, nil
}

// kerberosClient is the process's logged-in client for g's credentials,
// logging in on first use. A failed login is not kept: the next
// connection tries again. The client is never destroyed: it serves the
// process's clients of the cluster until the process ends.
func kerberosClient(g *sarama.GSSAPIConfig) (*krb5client.Client, error) {
	key := kerberosKey{configPath: g.KerberosConfigPath, realm: g.Realm, user: g.Username, password: g.Password,
		keytab: g.KeyTabPath, ccache: g.CCachePath, authType: g.AuthType, disableFAST: g.DisablePAFXFAST}
	kerberosLogins.mu.Lock()
	defer kerberosLogins.mu.Unlock()
	if cl, ok := kerberosLogins.clients[key]; ok {
		return cl, nil
	}
	cl, err := kerberosLogin(g)
	if err != nil {
		return nil, err
	}
	if kerberosLogins.clients == nil {
		kerberosLogins.clients = map[kerberosKey]*krb5client.Client{}
	}
	kerberosLogins.clients[key] = cl
	return cl, nil
}

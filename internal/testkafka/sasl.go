package testkafka

import (
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OfferOAuthBearer makes fake's SASL handshake offer OAUTHBEARER alone and
// refuse any other mechanism (UNSUPPORTED_SASL_MECHANISM), as a broker
// that takes only bearer tokens does; the test answers SASLAuthenticate.
func OfferOAuthBearer(fake *kfake.Cluster) {
	fake.ControlKey(kmsg.SASLHandshake.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		r := req.(*kmsg.SASLHandshakeRequest)
		resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"OAUTHBEARER"}
		if r.Mechanism != "OAUTHBEARER" {
			resp.ErrorCode = 33 // UNSUPPORTED_SASL_MECHANISM
		}
		return resp, nil, true
	})
}

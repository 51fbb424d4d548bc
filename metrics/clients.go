package metrics

import "github.com/prometheus/client_golang/prometheus"

// NameClientRefusals counts requests refused by a per-client bound before authentication, by
// reason. It has no address label: addresses are unbounded, and personal data in some
// jurisdictions.
const NameClientRefusals = "mcp_gateway_client_refusals_total"

// Reasons of a per-client refusal.
const (
	// ClientRefusalInFlight: the client address had its share of unauthenticated requests in
	// flight (server.perClient.maxUnauthenticated).
	ClientRefusalInFlight = "unauthenticated_in_flight"
	// ClientRefusalBodyBytes: the bodies of the client address's unauthenticated requests held
	// its share of the replica's body budget (server.perClient.maxBodyBytesInFlight).
	ClientRefusalBodyBytes = "unauthenticated_body_bytes"
	// ClientRefusalFailedAuth: the client address was over its rate of failed authentications
	// and its token was not one verified before (server.perClient.failedAuthPerMinute).
	ClientRefusalFailedAuth = "failed_auth_rate"
)

// ClientRefusalReasons returns the closed set of the reason label.
func ClientRefusalReasons() []string {
	return []string{ClientRefusalInFlight, ClientRefusalBodyBytes, ClientRefusalFailedAuth}
}

func (r *Recorder) buildClients(cs *[]prometheus.Collector) {
	r.clientReasons = newClosedSet(ClientRefusalReasons())
	r.clientRefusals = newTable(r.newCounterVec(cs, NameClientRefusals,
		"Requests refused by a per-client-address bound before authentication, by reason.",
		"reason").WithLabelValues, r.clientReasons)
	for i := range r.clientReasons.size() - 1 {
		r.clientRefusals.at1(i)
	}
}

// ClientRefusal counts one request refused by a per-client bound (ClientRefusal* reasons).
func (r *Recorder) ClientRefusal(reason string) {
	if r == nil {
		return
	}
	r.clientRefusals.at1(r.clientReasons.of(reason)).Inc()
}

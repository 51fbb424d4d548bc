package webpage

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestAuthStyleFromMetadata: the token request authenticates the way the provider's discovery
// document says it accepts, client_secret_basic when it says nothing (its default), and a public
// client names itself in the body.
func TestAuthStyleFromMetadata(t *testing.T) {
	var methods string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss := "http://" + r.Host
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"issuer":"`+iss+`","authorization_endpoint":"`+iss+`/auth","token_endpoint":"`+iss+
			`/token","jwks_uri":"`+iss+`/keys"`+methods+`}`)
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		methods string
		public  bool
		want    oauth2.AuthStyle
	}{
		{"", false, oauth2.AuthStyleInHeader},
		{`,"token_endpoint_auth_methods_supported":["client_secret_post"]`, false, oauth2.AuthStyleInParams},
		{`,"token_endpoint_auth_methods_supported":["client_secret_post","client_secret_basic"]`, false, oauth2.AuthStyleInHeader},
		{`,"token_endpoint_auth_methods_supported":["private_key_jwt"]`, false, oauth2.AuthStyleInHeader},
		{`,"token_endpoint_auth_methods_supported":["client_secret_basic"]`, true, oauth2.AuthStyleInParams},
	} {
		methods = tc.methods
		is := &issuer{url: srv.URL, client: srv.Client(), now: time.Now, public: tc.public}
		p, err := is.get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if p.endpoint.AuthStyle != tc.want {
			t.Errorf("methods %s, public %v: style %v, want %v", tc.methods, tc.public, p.endpoint.AuthStyle, tc.want)
		}
	}
}

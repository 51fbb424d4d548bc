package backend

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// Reach connects to rawURL's host as a request to it would, the TLS handshake included for
// https (with t, as for a backend, or the system's trust anchors when t is empty), and sends
// nothing. Operator tooling checks with it an endpoint it may not send a request to: a webhook,
// whose every POST is an invocation, or a token endpoint, which a probe must not hand a token.
// It returns what was reached: "plain http" or the TLS version.
func Reach(ctx context.Context, rawURL string, t TLSConfig, connect time.Duration) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not an http or https URL", configerr.URL(rawURL))
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	// The connect timeout bounds the dial and, as the backend transport's TLSHandshakeTimeout,
	// the handshake: a host that takes the connection and never answers fails within it.
	connect = orDuration(connect, DefaultConnectTimeout)
	d := net.Dialer{Timeout: connect}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return "", fmt.Errorf("%w: connecting: %w", wire.ErrUnavailable, err)
	}
	defer conn.Close()
	if u.Scheme == "http" {
		return "plain http", nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.set() {
		if c, err = clientTLS(t, slog.New(slog.DiscardHandler), time.Now); err != nil {
			return "", err
		}
	}
	if c.ServerName == "" {
		c.ServerName = u.Hostname()
	}
	tc := tls.Client(conn, c)
	hctx, cancel := context.WithTimeout(ctx, connect)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		return "", fmt.Errorf("%w: TLS handshake: %w", wire.ErrUnavailable, err)
	}
	return tls.VersionName(tc.ConnectionState().Version), nil
}

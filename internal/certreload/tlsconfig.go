package certreload

import "crypto/tls"

// ServerTLSConfig returns a server configuration that serves r's current
// certificate: TLS 1.2 at least, HTTP/2 offered first through ALPN, and for
// TLS 1.2 only forward-secret AEAD cipher suites (TLS 1.3 suites are not
// configurable in crypto/tls and are all modern). Pass it as
// http.Server.TLSConfig and call ServeTLS with empty file names.
func ServerTLSConfig(r *Reloader) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: r.GetCertificate,
		CipherSuites:   CipherSuites(),
	}
}

// CipherSuites returns the TLS 1.2 suites [ServerTLSConfig] allows: ECDHE
// key exchange with AES-GCM or ChaCha20-Poly1305, for ECDSA and RSA
// certificates. CBC and static-RSA suites are left out. HTTP/2 requires
// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RFC 9113 §9.2.2), and net/http
// refuses to serve HTTP/2 without it.
func CipherSuites() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}

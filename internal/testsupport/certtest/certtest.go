// Package certtest issues throwaway certificates for tests and lays them
// out on disk the way the gateway meets them in production: as plain files,
// or as a Kubernetes Secret volume whose files are replaced by an atomic
// symlink swap.
package certtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// DefaultValidity is how long a leaf issued without [Leaf.NotAfter] is
// valid; the CA is valid for the same span.
const DefaultValidity = 24 * time.Hour

// backdate covers clock skew between the test and the code under test.
const backdate = time.Hour

// CA is a certificate authority that exists only for one test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// Pair is an issued certificate and its private key, PEM-encoded.
type Pair struct {
	// CertPEM is the leaf certificate.
	CertPEM []byte
	// KeyPEM is the leaf's PKCS #8 private key.
	KeyPEM []byte
	// Leaf is the parsed leaf, for comparing with what a peer presents.
	Leaf *x509.Certificate
}

// Leaf describes a certificate to issue; zero fields take defaults.
type Leaf struct {
	// CommonName is the subject CN; default "localhost".
	CommonName string
	// NotBefore defaults to an hour ago.
	NotBefore time.Time
	// NotAfter defaults to [DefaultValidity] from now.
	NotAfter time.Time
}

// NewCA creates a self-signed ECDSA P-256 CA.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	key := newKey(tb)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(tb),
		Subject:               pkix.Name{CommonName: "certtest CA"},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(DefaultValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("certtest: creating CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("certtest: parsing CA: %v", err)
	}
	return &CA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool returns a new pool holding only the CA, for a client's RootCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// CertPEM returns the CA certificate, PEM-encoded.
func (ca *CA) CertPEM() []byte { return append([]byte(nil), ca.pem...) }

// Issue signs a server certificate for localhost, 127.0.0.1 and ::1 with a
// fresh key and a random serial number.
func (ca *CA) Issue(tb testing.TB, l Leaf) Pair {
	tb.Helper()
	now := time.Now()
	if l.CommonName == "" {
		l.CommonName = "localhost"
	}
	if l.NotBefore.IsZero() {
		l.NotBefore = now.Add(-backdate)
	}
	if l.NotAfter.IsZero() {
		l.NotAfter = now.Add(DefaultValidity)
	}
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(tb),
		Subject:      pkix.Name{CommonName: l.CommonName},
		NotBefore:    l.NotBefore,
		NotAfter:     l.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatalf("certtest: issuing %s: %v", l.CommonName, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("certtest: parsing %s: %v", l.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("certtest: encoding key: %v", err)
	}
	return Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Leaf:    leaf,
	}
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("certtest: generating key: %v", err)
	}
	return key
}

func newSerial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		tb.Fatalf("certtest: serial: %v", err)
	}
	return n
}

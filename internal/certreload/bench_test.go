package certreload

import "testing"

// BenchmarkGetCertificate is the cost added to every TLS handshake.
func BenchmarkGetCertificate(b *testing.B) {
	r := benchReloader(b)
	b.ReportAllocs()
	for b.Loop() {
		if c, _ := r.GetCertificate(nil); c == nil {
			b.Fatal("no certificate")
		}
	}
}

// BenchmarkReloadUnchanged is the cost of one poll when nothing changed:
// two file reads and a SHA-256 over a few kilobytes.
func BenchmarkReloadUnchanged(b *testing.B) {
	r := benchReloader(b)
	b.ReportAllocs()
	for b.Loop() {
		if changed, err := r.Reload(); changed || err != nil {
			b.Fatal(changed, err)
		}
	}
}

func benchReloader(b *testing.B) *Reloader {
	b.Helper()
	f := newFixture(b)
	r, err := New(f.certFile, f.keyFile)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

package certtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Names of the files in a [Mount], as in a kubernetes.io/tls Secret.
const (
	CertName = "tls.crt"
	KeyName  = "tls.key"
)

// dataLink is the kubelet's indirection: the visible files point through
// it, and an update retargets it with one rename.
const dataLink = "..data"

// Mount is a directory laid out like a Kubernetes Secret volume:
//
//	tls.crt -> ..data/tls.crt
//	tls.key -> ..data/tls.key
//	..data  -> ..gen-1
//	..gen-1/tls.crt, ..gen-1/tls.key
//
// [Mount.Update] writes a new generation directory and swaps ..data to it
// atomically, then removes the old generation, as the kubelet does.
type Mount struct {
	dir string
	gen int
}

// NewMount lays out p in dir, which must exist and be empty.
func NewMount(tb testing.TB, dir string, p Pair) *Mount {
	tb.Helper()
	m := &Mount{dir: dir}
	m.Update(tb, p)
	for _, name := range []string{CertName, KeyName} {
		if err := os.Symlink(filepath.Join(dataLink, name), filepath.Join(dir, name)); err != nil {
			tb.Fatalf("certtest: %v", err)
		}
	}
	return m
}

// CertFile is the path of the certificate the code under test reads.
func (m *Mount) CertFile() string { return filepath.Join(m.dir, CertName) }

// KeyFile is the path of the key the code under test reads.
func (m *Mount) KeyFile() string { return filepath.Join(m.dir, KeyName) }

// Update replaces the pair with one atomic symlink swap, so a reader sees
// either the old pair or the new one, never a mix.
func (m *Mount) Update(tb testing.TB, p Pair) {
	tb.Helper()
	m.gen++
	gen := fmt.Sprintf("..gen-%d", m.gen)
	if err := os.Mkdir(filepath.Join(m.dir, gen), 0o755); err != nil {
		tb.Fatalf("certtest: %v", err)
	}
	WriteFiles(tb, filepath.Join(m.dir, gen, CertName), filepath.Join(m.dir, gen, KeyName), p)
	tmp := filepath.Join(m.dir, dataLink+"_tmp")
	if err := os.Symlink(gen, tmp); err != nil {
		tb.Fatalf("certtest: %v", err)
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, dataLink)); err != nil {
		tb.Fatalf("certtest: %v", err)
	}
	if m.gen > 1 {
		if err := os.RemoveAll(filepath.Join(m.dir, fmt.Sprintf("..gen-%d", m.gen-1))); err != nil {
			tb.Fatalf("certtest: %v", err)
		}
	}
}

// WriteFiles writes p's certificate and key to the two paths in place
// (not atomically, unlike [Mount.Update]); the key is readable by the owner
// only.
func WriteFiles(tb testing.TB, certFile, keyFile string, p Pair) {
	tb.Helper()
	if err := os.WriteFile(certFile, p.CertPEM, 0o644); err != nil {
		tb.Fatalf("certtest: %v", err)
	}
	if err := os.WriteFile(keyFile, p.KeyPEM, 0o600); err != nil {
		tb.Fatalf("certtest: %v", err)
	}
}

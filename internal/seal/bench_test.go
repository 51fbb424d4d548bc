package seal

import (
	"bytes"
	"testing"
)

// benchPlaintext is about the size of an encoded MRTR state.
var benchPlaintext = bytes.Repeat([]byte("s"), 200)

func BenchmarkSeal(b *testing.B) {
	s := mustRing(b, Config{Keys: []Key{testKey("k1", 1), testKey("k2", 2)}}).Sealer(PurposeRequestState)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Seal(benchPlaintext); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	s := mustRing(b, Config{Keys: []Key{testKey("k1", 1), testKey("k2", 2)}}).Sealer(PurposeRequestState)
	tok, err := s.Seal(benchPlaintext)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Open(tok); err != nil {
			b.Fatal(err)
		}
	}
}

package jsonrpc

import (
	"strings"
	"testing"
)

// scanBodies are backend responses of about 1 MiB (issue 21: a tools/call whose result carries
// 1 MB of text): one ASCII string, one string of mixed ASCII and multi-byte UTF-8, one string
// with an escape every few bytes, and many small objects.
func scanBodies() map[string][]byte {
	const size = 1 << 20
	wrap := func(text string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
	}
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"rows":[`)
	for i := 0; sb.Len() < size; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"k":"v","n":12345,"b":true}`)
	}
	sb.WriteString(`]}}`)
	return map[string][]byte{
		"ascii":   wrap(strings.Repeat("The quick brown fox jumps over the lazy dog. ", size/45)),
		"utf8":    wrap(strings.Repeat("Grüße aus Köln, 東京 und Москва. ", size/40)),
		"escapes": wrap(strings.Repeat(`line one\n\"quoted\"\tand a tab, `, size/32)),
		"objects": []byte(sb.String()),
	}
}

func BenchmarkScan(b *testing.B) {
	for _, name := range []string{"ascii", "utf8", "escapes", "objects"} {
		body := scanBodies()[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Scan(body, Limits{MaxTokenBytes: 4 << 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeMessage(b *testing.B) {
	for _, name := range []string{"ascii", "utf8", "objects"} {
		body := scanBodies()[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeMessage(body, Limits{MaxTokenBytes: 4 << 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package mrtr

import (
	"context"
	"encoding/json"
	"testing"
)

func BenchmarkCodecSeal(b *testing.B) {
	f := newFixture(b)
	st := stateFor(testBinding(b), KindConfirm)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.codec.Seal(st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCodecOpen(b *testing.B) {
	f := newFixture(b)
	bind := testBinding(b)
	tok, err := f.codec.Seal(stateFor(bind, KindConfirm))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.codec.Open(tok, bind); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDigest(b *testing.B) {
	args := json.RawMessage(`{"owner":"mcp-gateway","repo":"gateway","title":"Crash on retry","body":"Steps:\n1. call\n2. retry","labels":["bug","p1"],"assignees":[]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Digest(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrapUpstream(b *testing.B) {
	f := newFixture(b)
	st := stateFor(testBinding(b), KindUpstream)
	result := json.RawMessage(`{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"mode":"form","message":"User?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"backend-state-0123456789"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.codec.WrapUpstream(result, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConsume(b *testing.B) {
	f := newFixture(b)
	bind := testBinding(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		tok, _ := f.codec.Seal(stateFor(bind, KindConfirm))
		st, _ := f.codec.Open(tok, bind)
		b.StartTimer()
		if err := f.codec.Consume(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
}

package backend

import (
	"bytes"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// TestCanonicalNotification: a notification is relayed as read only when that is byte for byte
// what rendering it would give; anything else is rendered.
func TestCanonicalNotification(t *testing.T) {
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`, true},
		{"without params", `{"jsonrpc":"2.0","method":"notifications/x"}`, true},
		{"params not an object", `{"jsonrpc":"2.0","method":"notifications/x","params":[1]}`, true},
		{"spaces", `{"jsonrpc":"2.0", "method":"notifications/progress","params":{}}`, false},
		{"space before the end", `{"jsonrpc":"2.0","method":"notifications/progress","params":{} }`, false},
		{"line break in params", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\n}}", true},
		{"members reordered", `{"method":"notifications/progress","jsonrpc":"2.0","params":{}}`, false},
		{"params first", `{"jsonrpc":"2.0","params":{},"method":"notifications/progress"}`, false},
		{"unknown member", `{"jsonrpc":"2.0","method":"notifications/progress","params":{},"x":1}`, false},
		{"null id", `{"jsonrpc":"2.0","method":"notifications/progress","params":{},"id":null}`, false},
		{"escaped method", `{"jsonrpc":"2.0","method":"notifications\/progress","params":{}}`, false},
		{"method with < (AppendString keeps it)", `{"jsonrpc":"2.0","method":"a<b","params":{}}`, true},
		{"method with &", `{"jsonrpc":"2.0","method":"a&b"}`, true},
		{"method with a quote", `{"jsonrpc":"2.0","method":"a\"b"}`, false},
		{"non-ASCII method (cautious)", `{"jsonrpc":"2.0","method":"é","params":{}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			m, err := jsonrpc.DecodeMessage(data, jsonrpc.Limits{})
			if err != nil || m.ID != nil || m.Method == "" {
				t.Fatalf("not a notification: %v", err)
			}
			got := isCanonicalNotification(data, m.Method, m.Params)
			if got != tt.want {
				t.Fatalf("isCanonicalNotification = %v, want %v", got, tt.want)
			}
			// False where rendering happens to give the same bytes is merely cautious.
			if rendered := jsonrpc.AppendNotification(nil, m.Method, m.Params); got && !bytes.Equal(rendered, data) {
				t.Fatalf("relayed as read %s, rendering gives %s", data, rendered)
			}
		})
	}
	// Equal params elsewhere than in data are not the bytes that were checked in place.
	data := []byte(`{"jsonrpc":"2.0","method":"n","params":{}}`)
	if isCanonicalNotification(data, "n", []byte(`{}`)) {
		t.Fatal("params from another buffer taken for data's own")
	}
}

// FuzzCanonicalNotification: whenever a notification is relayed as read, it is exactly what
// rendering it would have sent.
func FuzzCanonicalNotification(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/x"}`)
	f.Add(`{"jsonrpc":"2.0","method":"a\u003cb","params":{}}`)
	f.Add(`{"jsonrpc":"2.0","method":"n","params":{},"params":{}}`)
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		m, err := jsonrpc.DecodeMessage(data, jsonrpc.Limits{})
		if err != nil || m.ID != nil || m.Method == "" {
			return
		}
		if isCanonicalNotification(data, m.Method, m.Params) {
			if rendered := jsonrpc.AppendNotification(nil, m.Method, m.Params); !bytes.Equal(rendered, data) {
				t.Fatalf("relayed as read %s, rendering gives %s", data, rendered)
			}
		}
	})
}

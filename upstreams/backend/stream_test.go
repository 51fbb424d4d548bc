package backend

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// TestFinalErrorData: a backend error's data.uri (SEP-2164) is namespaced; one naming a hidden
// resource is the hidden answer for resources/read and loses its data otherwise.
func TestFinalErrorData(t *testing.T) {
	ns := names.New("__", false, []string{"fs"})
	for _, tt := range []struct{ method, data, want string }{
		{wire.MethodResourcesRead, `{"uri":"file:///a/../missing"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"fs+file:///missing"}}}`},
		{wire.MethodResourcesRead, `{"uri":"file:///secret/k"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"` + names.HiddenResourceMessage + `"}}`},
		{wire.MethodToolsCall, `{"uri":"file:///secret/k"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found"}}`},
		{wire.MethodToolsCall, `{"detail":"x"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found","data":{"detail":"x"}}}`},
	} {
		s := &Stream{method: tt.method, id: json.RawMessage("1"), rw: names.Rewriter{Space: ns, Upstream: "fs", Visible: hideSecret}}
		got, err := s.render(&jsonrpc.Message{Error: &jsonrpc.Error{Code: -32602, Message: "Resource not found", Data: json.RawMessage(tt.data)}})
		if err != nil || string(got) != tt.want {
			t.Errorf("%s with data %s:\n got %s, %v\nwant %s", tt.method, tt.data, got, err, tt.want)
		}
	}
}

package catalog

import "testing"

// TestAppToolVisibility: how a tool's _meta.ui.visibility is read (docs/apps.md). Absent, the tool
// is the model's and the app's; present, it is only theirs that it names; a value that is not an
// array of strings names neither, which shows the tool to nobody, model or app.
func TestAppToolVisibility(t *testing.T) {
	const ui = `"resourceUri":"ui://w/v.html"`
	for _, tc := range []struct {
		name, tool     string
		noModel, noApp bool
	}{
		{"absent", `{"name":"t","_meta":{"ui":{` + ui + `}}}`, false, false},
		{"both", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":["model","app"]}}}`, false, false},
		{"app only", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":["app"]}}}`, true, false},
		{"model only", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":["model"]}}}`, false, true},
		{"empty", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":[]}}}`, true, true},
		{"a string", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":"model"}}}`, true, true},
		{"an object", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":{"model":true}}}}`, true, true},
		{"null", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":null}}}`, true, true},
		{"numbers", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":[1,2]}}}`, true, true},
		// Spellings a case-folding decoder reads as the member: the strictest reading holds.
		{"Visibility", `{"name":"t","_meta":{"ui":{` + ui + `,"Visibility":["model"]}}}`, false, true},
		{"VISIBILITY after", `{"name":"t","_meta":{"ui":{` + ui + `,"visibility":["model","app"],"VISIBILITY":["app"]}}}`, true, false},
		{"escaped", `{"name":"t","_meta":{"ui":{` + ui + `,"vi\u0073ibility":["app"]}}}`, true, false},
		{"long s", `{"name":"t","_meta":{"ui":{` + ui + `,"viſibility":["model"]}}}`, false, true},
		{"UI and _META", `{"name":"t","_META":{"UI":{"RESOURCEURI":"ui://w/v.html","visibility":["app"]}}}`, true, false},
		{"two ui", `{"name":"t","_meta":{"ui":{` + ui + `},"Ui":{"visibility":["model"]}}}`, false, true},
		{"two _meta", `{"name":"t","_meta":{"ui":{` + ui + `}},"_Meta":{"u_i":{"visibility":["app"]}}}`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := readAppTool([]byte(tc.tool))
			if !a.ui || a.noModel != tc.noModel || a.noApp != tc.noApp {
				t.Errorf("%s: %+v, want noModel %v noApp %v", tc.tool, a, tc.noModel, tc.noApp)
			}
		})
	}
}

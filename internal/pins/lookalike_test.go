package pins

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// shadowsIn reports the pinned tool (of tools, by name) that a backend tool named name
// shadows, "" for none.
func shadowsIn(t *testing.T, tools []string, name string) string {
	t.Helper()
	pinned := make(map[string]*Definition, len(tools))
	for _, n := range tools {
		pinned[n] = def(t, KindTool, `{"name":`+mustJSON(n)+`,"description":""}`)
	}
	key, ok := newShadowIndex(pinned).match(itemSig(def(t, KindTool, `{"name":`+mustJSON(name)+`,"description":""}`)))
	if !ok {
		return ""
	}
	return key
}

// TestShadowLookAlikeScripts: the scripts besides Cyrillic, Greek and Armenian whose letters
// Unicode's confusables data reads as Latin letters or digits (Cherokee, Coptic, Lisu, Osage,
// Warang Citi, Canadian Syllabics, Carian, Tifinagh, and Latin's own dotless i and script a)
// used to be left out: a clone of a pinned tool spelled with them was not a near duplicate. Each
// family spells a pinned name with two or more of its letters (one alone is within the one-typo
// rule).
func TestShadowLookAlikeScripts(t *testing.T) {
	tools := []string{"read_file", "copy_page", "open_file", "log_reader", "patch_file", "add_user", "list_files", "merge_model", "run_job", "get_order"}
	for _, c := range []struct{ family, name, want string }{
		{"Cherokee", "ᎡᎬᎪᎠ_file", "read_file"},                 // Ꭱ Ꭼ Ꭺ Ꭰ
		{"Coptic", "ⲥⲟⲣy_ⲣage", "copy_page"},                   // ⲥ ⲟ ⲣ
		{"Lisu", "ꓣꓰꓮꓓ_ꓝꓲꓡꓰ", "read_file"},                     // every letter
		{"Armenian (mapped before)", "ցet_օrder", "get_order"}, // օ, and Latin for the rest
		{"Osage", "r𐓶n_j𐓪b", "run_job"},                        // 𐓪
		{"Warang Citi", "l𑣈g_r𑢦ader", "log_reader"},            // 𑣈 𑢦
		{"Canadian Syllabics", "ᑭᗅTCH_file", "patch_file"},
		{"Carian", "𐊢𐊫PY_PAGE", "copy_page"},
		{"Tifinagh", "ⵔPⴹN_FILE", "open_file"},
		{"Latin script a and upsilon", "ɑdd_ʋser", "add_user"},
		{"Latin dotless i", "lıst_fıles", "list_files"},
		// Legitimately different names of those scripts are not flagged.
		{"Cherokee", "ᏣᎳᎩ_ᎦᏬᏂᎯᏍᏗ", ""},
		{"Lisu", "ꓡꓲ-ꓢꓳ", ""},
	} {
		if got := shadowsIn(t, tools, c.name); got != c.want {
			t.Errorf("%s %q shadows %q, want %q", c.family, c.name, got, c.want)
		}
	}
}

// TestShadowLatinLookAlikes: look-alikes within Latin letters and digits (0 and O; 1, l and
// capital I; rn and m; vv and w; cl and d) read as one, so a clone spelled with several of them
// is a near duplicate; one alone was within the one-typo rule already, several were not. Short
// names read alike when their letters and digits are the same in order ("l0g", "log"). Two real
// tools whose names are look-alikes of each other ("modem" and "modern") read alike too: the
// one not pinned shadows the pinned one, as docs/pinning.md says, until an operator pins it.
func TestShadowLatinLookAlikes(t *testing.T) {
	tools := []string{"config_loader", "list_files", "merge_model", "write_workbook", "delete_draft", "log", "modem_reset", "close_issue"}
	for _, c := range []struct{ family, name, want string }{
		{"0 and O", "c0nfig_l0ader", "config_loader"},
		{"0 and O", "C0NFIG_LOADER", "config_loader"},
		{"1 and l", "1ist_fi1es", "list_files"},
		{"capital I and l", "Iist_fiIes", "list_files"},
		{"rn and m", "rnerge_rnodel", "merge_model"},
		{"vv and w", "vvrite_vvorkbook", "write_workbook"},
		{"cl and d", "clelete_clraft", "delete_draft"},
		{"1 and l, cl and d", "c1ose_issue", "close_issue"},
		{"short", "l0g", "log"},
		{"short", "1og", "log"},
		{"real tools", "modern_reset", "modem_reset"},
		// Not look-alikes.
		{"other letters", "merge_models_now", ""},
		{"other letters", "write_notebook", ""},
		{"other letters", "lag", ""},
	} {
		if got := shadowsIn(t, tools, c.name); got != c.want {
			t.Errorf("%s %q shadows %q, want %q", c.family, c.name, got, c.want)
		}
	}
	// The names a model is shown are left as they are: only the comparison reads them alike.
	if w := NameWords("c0nfig_l0ader"); strings.Join(w, " ") != "c 0 nfig l 0 ader" {
		t.Errorf("NameWords(c0nfig_l0ader) = %q", w)
	}
}

// TestSkeletonTableFollowsUnicodeData: every row of confusables.txt (Unicode's confusables data
// whose prototype is ASCII) whose source is a letter or number, and whose prototype is one ASCII
// letter or digit or rn, is read by shadowing's name comparison as its prototype: the generated
// table (go generate ./internal/pins) is not stale, and the Latin look-alikes agree with the
// data's ASCII rows (0 O, 1 l, I l, m rn).
func TestSkeletonTableFollowsUnicodeData(t *testing.T) {
	f, err := os.Open("confusables.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read := func(s string) string { return latinFamilies(foldText(latinSkeleton(s))) }
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Split(line, ";")
		if len(fields) < 3 {
			continue
		}
		src, proto := hexRunes(t, fields[0]), hexRunes(t, fields[1])
		if len(src) != 1 || !(unicode.IsLetter(src[0]) || unicode.IsNumber(src[0])) {
			continue
		}
		if p := string(proto); len(proto) != 1 && p != "rn" {
			continue
		}
		rows++
		if got, want := read(string(src)), read(string(proto)); got != want {
			t.Errorf("U+%04X %c (%s) reads as %q, Unicode's prototype %q as %q", src[0], src[0], strings.TrimSpace(sc.Text()[strings.LastIndex(sc.Text(), ")")+1:]), got, string(proto), want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 1000 {
		t.Fatalf("only %d rows of confusables.txt checked", rows)
	}
}

func hexRunes(t *testing.T, field string) []rune {
	t.Helper()
	var out []rune
	for _, h := range strings.Fields(field) {
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rune(v))
	}
	return out
}

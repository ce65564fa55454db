package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEOpensWithTheGuarantee: the README opens with its two commands
// (run it on the committed data, test it), then says in a short section
// before Install what is protected and the three things a newcomer must
// know (name the dataset for a lifetime budget, a seed is single-use, δ
// grows with every run), and links to the implementation details, which
// label/README.md keeps (a user's README stays short).
func TestREADMEOpensWithTheGuarantee(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	first := strings.Index(readme, "```sh\n")
	block := readme[first+6:]
	block = block[:strings.Index(block, "```")]
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if first < 0 || first > 200 || len(lines) != 2 || !strings.HasPrefix(lines[0], "go run . label ") ||
		!strings.Contains(lines[0], "testdata/") || lines[1] != "go test ./..." {
		t.Errorf("the README does not open with its two commands: %q", lines)
	}
	section := func(title string) (start int, body string) {
		start = strings.Index(readme, "\n## "+title+"\n")
		if start < 0 {
			t.Fatalf("no section %q", title)
		}
		body = readme[start+len(title)+5:]
		if end := strings.Index(body, "\n## "); end >= 0 {
			body = body[:end]
		}
		return start, body
	}
	install, _ := section("Install")
	short, body := section("The guarantee, in short")
	if !(short < install) {
		t.Errorf("want the short guarantee before Install")
	}
	// The details are label/README's, which the short guarantee links to.
	if !strings.Contains(body, "(label/README.md#the-guarantee-in-detail)") {
		t.Errorf("the short guarantee does not link to its details")
	}
	lb, err := os.ReadFile(filepath.Join("label", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, detailBody, ok := strings.Cut(string(lb), "\n## The guarantee in detail\n")
	if !ok {
		t.Fatalf("label/README.md has no section %q", "The guarantee in detail")
	}
	if end := strings.Index(detailBody, "\n## "); end >= 0 {
		detailBody = detailBody[:end]
	}
	if n := strings.Count(strings.TrimSpace(body), "\n") + 1; n > 25 {
		t.Errorf("the short guarantee has %d lines, want at most 25", n)
	}
	for _, want := range []string{"privacy unit", "--dataset", "lifetime", "seed is single-use", "δ grows with every run", "does not protect"} {
		if !strings.Contains(body, want) {
			t.Errorf("the short guarantee does not say %q", want)
		}
	}
	for _, detailOnly := range []string{"AES-256-CTR", "unsigned 64-bit"} {
		if strings.Contains(readme, detailOnly) {
			t.Errorf("%q is in the README, not in label/README's details", detailOnly)
		}
		if !strings.Contains(detailBody, detailOnly) {
			t.Errorf("the details lost %q", detailOnly)
		}
	}
}

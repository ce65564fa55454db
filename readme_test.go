package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEOpensWithTheGuarantee: the README opens with its two commands
// (run it on the committed data, test it), then says in a short section
// before Install what is protected and the three things a newcomer must
// know (name the dataset for a lifetime budget, a seed is single-use, δ
// grows with every run); the implementation details of the guarantee come
// after Install.
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
	detail, detailBody := section("The guarantee in detail")
	if !(short < install && install < detail) {
		t.Errorf("want the short guarantee before Install and the details after it")
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
		if strings.Contains(readme[:install], detailOnly) {
			t.Errorf("%q comes before Install", detailOnly)
		}
		if !strings.Contains(detailBody, detailOnly) {
			t.Errorf("the details lost %q", detailOnly)
		}
	}
}

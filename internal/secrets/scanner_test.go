package secrets

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// gitleaks returns gitleaks' own detector with its default rules: the
// reference the Scanner is held to.
func gitleaks(t testing.TB) *detect.Detector {
	t.Helper()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	return detect.NewDetector(cfg)
}

// prose is text that holds the keywords of many rules in ordinary use.
var prose = []string{
	"They said the API key for the staging access was rotated; ask Dana, this is the third time.",
	"Can you check whether the token is in the vault? The secret scanner passed, thanks, hey.",
	`{"inputTokens": 120, "outputTokens": 45, "role": "user", "text": "auth failed: 401"}`,
	"password reset for the admin console, credential expiry: next week, msg. sent to Asia team.",
	"",
}

// TestScannerFindsWhatGitleaksFinds generates, for every rule of gitleaks'
// default set, texts its expression matches, puts each in prose, and holds
// the Scanner to gitleaks' detector: every secret gitleaks reports lies
// within one the Scanner reports (which is the whole match where a rule's
// groups are named).
func TestScannerFindsWhatGitleaksFinds(t *testing.T) {
	ref := gitleaks(t)
	sc := Default()
	rng := rand.New(rand.NewPCG(1, 2))
	found, checked := 0, 0
	for _, r := range ref.Config.Rules {
		if r.Regex == nil {
			continue
		}
		gen, err := reggen.NewGenerator(r.Regex.String())
		if err != nil {
			t.Fatalf("%s: %v", r.RuleID, err)
		}
		gen.SetSeed(rng.Int64())
		for i := range 40 {
			before, after := prose[rng.IntN(len(prose))], prose[rng.IntN(len(prose))]
			sep := []string{" ", "\n", " \"", ": "}[i%4]
			text := before + sep + gen.Generate(8) + sep + after
			want := ref.DetectString(text)
			got := sc.Find(text)
			checked++
			for _, f := range want {
				found++
				ok := false
				for _, m := range got {
					if strings.Contains(text[m.Start:m.End], f.Secret) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s: gitleaks found %q in %q; the scanner found %v", f.RuleID, f.Secret, text, describe(text, got))
				}
			}
		}
	}
	t.Logf("%d texts, %d gitleaks findings, all found", checked, found)
	if found < 500 {
		t.Fatalf("only %d findings: the generated samples do not exercise the rules", found)
	}
}

func describe(text string, ms []Match) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s[%s]", m.Rule, text[m.Start:m.End]))
	}
	return strings.Join(parts, ", ")
}

func TestScannerProseIsClean(t *testing.T) {
	for _, p := range prose {
		if got := Default().Find(p); len(got) > 0 {
			t.Errorf("%q: %s", p, describe(p, got))
		}
	}
}

func BenchmarkScannerProse(b *testing.B) {
	text := strings.Repeat(strings.Join(prose, " "), 2000)
	sc := Default()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		sc.Find(text)
	}
}

func BenchmarkScannerSmall(b *testing.B) {
	sc := Default()
	for b.Loop() {
		for _, p := range prose {
			sc.Find(p)
		}
	}
}

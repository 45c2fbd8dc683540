package agentconfig_test

import (
	"encoding/json"
	"math"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
)

func TestParseUSD(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want agentconfig.USD
		str  string
	}{
		{"0", 0, "$0.00"},
		{"2.50", 2_500_000_000_000, "$2.50"},
		{"$10", 10 * agentconfig.Dollar, "$10.00"},
		{"0.15", 150_000_000_000, "$0.15"},
		{"0.1", 100_000_000_000, "$0.10"},
		{"0.000000000001", 1, "$0.000000000001"},
		{"0.0375", 37_500_000_000, "$0.0375"},
		{"1000000", agentconfig.MaxUSD, "$1000000.00"},
	} {
		got, err := agentconfig.ParseUSD(c.in)
		if err != nil || got != c.want || got.String() != c.str {
			t.Errorf("ParseUSD(%q) = %d (%s), %v; want %d (%s)", c.in, got, got, err, c.want, c.str)
		}
	}
	for _, bad := range []string{"", "-1", "1e3", "0.0000000000001", "1,50", "abc", "1000000.01", "12345678", ".5"} {
		if v, err := agentconfig.ParseUSD(bad); err == nil {
			t.Errorf("ParseUSD(%q) = %v, want an error", bad, v)
		}
	}
}

func TestUSDDecoding(t *testing.T) {
	t.Parallel()
	var y struct {
		A agentconfig.USD `yaml:"a"`
		B agentconfig.USD `yaml:"b"`
	}
	if err := yaml.Unmarshal([]byte("a: 0.1\nb: \"2.50\"\n"), &y); err != nil || y.A != 100_000_000_000 || y.B != 2_500_000_000_000 {
		t.Errorf("YAML: %+v, %v", y, err)
	}
	var j struct{ A, B agentconfig.USD }
	if err := json.Unmarshal([]byte(`{"A": 0.1, "B": "2.50"}`), &j); err != nil || j.A != 100_000_000_000 || j.B != 2_500_000_000_000 {
		t.Errorf("JSON: %+v, %v", j, err)
	}
	out, _ := json.Marshal(j)
	if string(out) != `{"A":"0.10","B":"2.50"}` {
		t.Errorf("JSON out = %s", out)
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	p := agentconfig.Prices{Input: 150_000_000_000, Output: 600_000_000_000} // $0.15 / $0.60 per 1M
	// 1,000 in and 500 out: 1000·0.15/1e6 + 500·0.60/1e6 = $0.00045 exactly.
	if got := p.Cost(llm.Usage{InputTokens: 1000, OutputTokens: 500}); got != 450_000_000 || got.String() != "$0.00045" {
		t.Errorf("Cost = %d (%s)", got, got)
	}
	// A price with more than six decimals rounds up to the next picodollar.
	if got := agentconfig.CostOf(1, 1); got != 1 {
		t.Errorf("CostOf(1 token, 1 pUSD per 1M) = %d, want 1 (rounded up)", got)
	}
	if got := agentconfig.CostOf(3, 1_000_000); got != 3 {
		t.Errorf("CostOf exact = %d", got)
	}
	if got := agentconfig.CostOf(math.MaxInt64, agentconfig.MaxUSD); got != math.MaxInt64 {
		t.Errorf("CostOf saturates at %d", got)
	}
	if got := p.Cost(llm.Usage{InputTokens: -5}); got != 0 {
		t.Errorf("negative tokens cost %d", got)
	}
	huge := agentconfig.Prices{Input: agentconfig.MaxUSD, Output: agentconfig.MaxUSD}
	if got := huge.Cost(llm.Usage{InputTokens: math.MaxInt32, OutputTokens: math.MaxInt32}); got != math.MaxInt64 {
		t.Errorf("the sum saturates at %d", got)
	}
}

func TestTaskRender(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ tmpl, in, want string }{
		{"Q: {{input}} ({{input}})", "x", "Q: x (x)"},
		{"Summarise.", "text", "Summarise.\n\ntext"},
		{"Summarise.", "", "Summarise."},
		{"", "only", "only"},
	} {
		if got := (agentconfig.Task{PromptTemplate: c.tmpl}).Render(c.in); got != c.want {
			t.Errorf("Render(%q, %q) = %q, want %q", c.tmpl, c.in, got, c.want)
		}
	}
}

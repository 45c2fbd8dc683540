package agentconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// USD is an amount of US dollars in whole picodollars (1e-12 USD). Prices
// per million tokens given with up to six decimals then cost a whole
// number of picodollars per token, so costs add up exactly.
type USD int64

// Dollar is one US dollar, 1e12 picodollars.
const Dollar USD = 1_000_000_000_000

// MaxUSD bounds prices and budgets, far above any real one, so sums of
// many calls stay within int64.
const MaxUSD = 1_000_000 * Dollar

var usdPattern = regexp.MustCompile(`^(\d{1,7})(?:\.(\d{1,12}))?$`)

// ParseUSD reads a plain decimal such as "2.50", "0.15" or "10"; an
// optional leading "$" is allowed. Exponents and negative amounts are not.
func ParseUSD(s string) (USD, error) {
	m := usdPattern.FindStringSubmatch(strings.TrimPrefix(strings.TrimSpace(s), "$"))
	if m == nil {
		return 0, fmt.Errorf("%q is not an amount of dollars such as 2.50", s)
	}
	whole, _ := strconv.ParseInt(m[1], 10, 64) // at most 7 digits
	frac := int64(0)
	if m[2] != "" {
		frac, _ = strconv.ParseInt(m[2]+strings.Repeat("0", 12-len(m[2])), 10, 64)
	}
	v := USD(whole)*Dollar + USD(frac)
	if v > MaxUSD {
		return 0, fmt.Errorf("%s is more than the %s allowed", s, MaxUSD)
	}
	return v, nil
}

// String writes dollars with at least two decimals and no trailing zeros
// beyond them: "$2.50", "$0.000015".
func (u USD) String() string {
	sign := ""
	if u < 0 {
		sign, u = "-", -u
	}
	frac := strings.TrimRight(fmt.Sprintf("%012d", int64(u%Dollar)), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s$%d.%s", sign, int64(u/Dollar), frac)
}

// Dollars is u as a float, for display and for callers that keep floats.
func (u USD) Dollars() float64 { return float64(u) / float64(Dollar) }

// MarshalText writes the amount without the dollar sign ("2.50"), which
// ParseUSD and UnmarshalText read back.
func (u USD) MarshalText() ([]byte, error) { return []byte(strings.TrimPrefix(u.String(), "$")), nil }

// UnmarshalText reads what ParseUSD reads.
func (u *USD) UnmarshalText(b []byte) error {
	v, err := ParseUSD(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// UnmarshalYAML reads a number (2.50) or a string ("2.50") from its
// literal text, never through a float, so 0.1 stays exact.
// Its errors are yaml TypeErrors, so the decoder goes on and the
// document's other problems are reported with it.
func (u *USD) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: must be an amount of dollars such as 2.50", n.Line)}}
	}
	if err := u.UnmarshalText([]byte(n.Value)); err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	return nil
}

// UnmarshalJSON reads a JSON number or string, from its literal text.
func (u *USD) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return u.UnmarshalText([]byte(s))
	}
	return u.UnmarshalText(b)
}

// CostOf is the price of tokens at pricePerMillion dollars per million
// tokens, rounded up to the next picodollar; it saturates instead of
// overflowing.
func CostOf(tokens int64, pricePerMillion USD) USD {
	if tokens <= 0 || pricePerMillion <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(tokens), uint64(pricePerMillion))
	if hi >= 1_000_000 {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, 1_000_000)
	if r > 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return USD(q)
}

// Package egresstest holds the URL cases every user of package egress
// tests against: the guard's own test and the tools that fetch through a
// guard (probe_url) run the same table, so a case added here is checked
// everywhere.
package egresstest

import (
	"strings"

	"github.com/t3agent/t3agent/internal/egress"
)

// URLCases maps a URL to "" when a guard without an allow-list accepts
// it, or to a fragment of the refusal it must give.
func URLCases() map[string]string {
	return map[string]string{
		"http://127.0.0.1:8080/mcp":                                   "",
		"https://mcp.example.com/mcp?x=1":                             "",
		"http://[::1]:9/":                                             "",
		"http://10.0.0.5/mcp":                                         "",
		"ftp://example.com/":                                          "only http and https",
		"file:///etc/passwd":                                          "only http and https",
		"http://user:pw@example.com/":                                 "user info",
		"http:///nohost":                                              "no host",
		"http://169.254.169.254/latest/meta-data":                     "link-local",
		"http://169.254.170.2/v2/credentials":                         "link-local",
		"http://[fe80::1]/":                                           "link-local",
		"http://[fd00:ec2::254]/":                                     "cloud metadata",
		"http://100.100.100.200/":                                     "cloud metadata",
		"http://metadata.google.internal/":                            "cloud metadata service",
		"http://METADATA.GOOGLE.INTERNAL./":                           "cloud metadata service",
		"http://instance-data/":                                       "cloud metadata service",
		"http://[::ffff:169.254.169.254]/":                            "link-local",
		"http://[64:ff9b::a9fe:a9fe]/":                                "translation address",
		"http://[2002:a9fe:a9fe::1]/":                                 "translation address",
		"http://0.0.0.0:8080/":                                        "unspecified",
		"http://[::]/":                                                "unspecified",
		"http://239.1.2.3/":                                           "multicast",
		"http://255.255.255.255/":                                     "broadcast",
		"http://example.com/" + strings.Repeat("a", egress.MaxURLLen): "more than",
	}
}

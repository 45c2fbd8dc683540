package gate

import (
	"slices"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Check is one step of the gate's decision for one tool: the reason
// chain that the CLI's `tools explain NAME` prints and the console's
// tool page shows.
type Check struct {
	// Check is registered, enabled, admin_only, configuration_group or
	// trust_zone, in the gate's order.
	Check  string `json:"check"`
	Passed bool   `json:"passed"`
	// Cause says why, as a code: for enabled group_disabled,
	// override_on, override_off, default_on or default_off; for
	// admin_only any_user, admin or not_admin; for configuration_group
	// all_groups, allowed or not_allowed; for trust_zone
	// within_ceiling or above_ceiling.
	Cause string `json:"cause"`
	// ObservedOnly: failed, yet the tool is offered because enforcement
	// is observe.
	ObservedOnly bool `json:"observedOnly,omitempty"`
}

// The checks, in the gate's order.
const (
	CheckRegistered         = "registered"
	CheckEnabled            = "enabled"
	CheckAdminOnly          = "admin_only"
	CheckConfigurationGroup = "configuration_group"
	CheckTrustZone          = "trust_zone"
)

// Checks are the gate's checks for one registered tool, in the gate's
// order, each with its own outcome, also after the first that fails
// (that one is the decision's reason): an operator sees everything that
// stands in the way. The outcomes come from the gate's own primitives
// (the overrides, the zone's ceiling); d is the gate's decision for the
// same tool, actor and configuration.
func Checks(spec tool.Spec, d Decision, ov Overrides, actor *typo3.BackendUser, cfg Config) []Check {
	enabled := Check{Check: CheckEnabled, Passed: ov.Enabled(spec)}
	toolOn, overridden := ov.ToolOverride(spec.Name)
	switch {
	case !ov.GroupEnabled(spec.Group):
		enabled.Cause = "group_disabled"
	case overridden && toolOn:
		enabled.Cause = "override_on"
	case overridden:
		enabled.Cause = "override_off"
	case spec.EnabledByDefault:
		enabled.Cause = "default_on"
	default:
		enabled.Cause = "default_off"
	}
	admin := Check{Check: CheckAdminOnly, Passed: true, Cause: "any_user"}
	if spec.AdminOnly {
		admin.Passed = actor != nil && actor.Admin
		admin.Cause = "not_admin"
		if admin.Passed {
			admin.Cause = "admin"
		}
	}
	group := Check{Check: CheckConfigurationGroup, Passed: true, Cause: "all_groups"}
	if len(cfg.AllowedGroups) > 0 {
		group.Passed = slices.Contains(cfg.AllowedGroups, spec.Group)
		group.Cause = "not_allowed"
		if group.Passed {
			group.Cause = "allowed"
		}
	}
	zone := Check{Check: CheckTrustZone, Passed: d.Zone.Permits(d.DataClass), Cause: "within_ceiling"}
	if !zone.Passed {
		zone.Cause, zone.ObservedOnly = "above_ceiling", d.ObservedOnly
	}
	return []Check{{Check: CheckRegistered, Passed: true, Cause: "registered"}, enabled, admin, group, zone}
}

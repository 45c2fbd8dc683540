package tool

import "fmt"

// DataClass ranks how sensitive a tool's output is, 0 (public) to 5
// (secret-adjacent). The zero value is not a valid class, so a tool that
// forgets to declare one fails registration instead of leaking.
type DataClass int

const (
	PublicContent DataClass = iota + 1
	EditorContent
	SourceCode
	InternalConfiguration
	SystemDiagnostics
	SecretAdjacent
)

var dataClassNames = [...]string{"", "publicContent", "editorContent", "sourceCode", "internalConfiguration", "systemDiagnostics", "secretAdjacent"}

// Valid reports whether c is one of the six classes.
func (c DataClass) Valid() bool { return c >= PublicContent && c <= SecretAdjacent }

// Rank is 0 for publicContent up to 5 for secretAdjacent.
func (c DataClass) Rank() int { return int(c) - 1 }

func (c DataClass) String() string {
	if !c.Valid() {
		return fmt.Sprintf("DataClass(%d)", int(c))
	}
	return dataClassNames[c]
}

// ParseDataClass reads a class name as String writes it.
func ParseDataClass(s string) (DataClass, error) {
	for i, n := range dataClassNames {
		if i > 0 && n == s {
			return DataClass(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a data class (publicContent, editorContent, sourceCode, internalConfiguration, systemDiagnostics, secretAdjacent)", s)
}

// GroupDataClass is the class of a builtin group. Unknown groups are
// secretAdjacent, which only a local provider may receive.
func GroupDataClass(group string) DataClass {
	switch group {
	case GroupContent, GroupFiles:
		return EditorContent
	case GroupRAG:
		return PublicContent
	case GroupStructure, GroupConfiguration:
		return InternalConfiguration
	case GroupCode:
		return SourceCode
	case GroupSystem:
		return SystemDiagnostics
	}
	return SecretAdjacent
}

// TrustZone says how far a provider is trusted with data.
type TrustZone string

const (
	ZoneLocal          TrustZone = "local"
	ZonePrivateHosted  TrustZone = "privateHosted"
	ZoneExternalEU     TrustZone = "externalEu"
	ZoneExternalGlobal TrustZone = "externalGlobal"
)

// Rank orders zones from most (0, local) to least trusted (3). Unknown
// zones rank as externalGlobal.
func (z TrustZone) Rank() int {
	switch z {
	case ZoneLocal:
		return 0
	case ZonePrivateHosted:
		return 1
	case ZoneExternalEU:
		return 2
	}
	return 3
}

// Normalize maps unknown or empty zones to externalGlobal.
func (z TrustZone) Normalize() TrustZone {
	switch z {
	case ZoneLocal, ZonePrivateHosted, ZoneExternalEU:
		return z
	}
	return ZoneExternalGlobal
}

// Ceiling is the most sensitive class a zone may receive.
func (z TrustZone) Ceiling() DataClass {
	switch z.Normalize() {
	case ZoneLocal:
		return SecretAdjacent
	case ZonePrivateHosted:
		return SystemDiagnostics
	case ZoneExternalEU:
		return InternalConfiguration
	}
	return EditorContent
}

// Permits reports whether the zone may receive output of class c.
func (z TrustZone) Permits(c DataClass) bool { return c.Valid() && c.Rank() <= z.Ceiling().Rank() }

// LeastTrusted returns the least trusted of the zones (externalGlobal for
// none), for a provider and its fallbacks.
func LeastTrusted(zones ...TrustZone) TrustZone {
	least := ZoneLocal
	if len(zones) == 0 {
		return ZoneExternalGlobal
	}
	for _, z := range zones {
		if z.Normalize().Rank() > least.Rank() {
			least = z.Normalize()
		}
	}
	return least
}

// MarshalText writes the class name, so JSON shows "editorContent"
// rather than a number. The zero value has no name and is refused.
func (c DataClass) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("cannot encode %v: not a data class", c)
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a class name as MarshalText writes it.
func (c *DataClass) UnmarshalText(b []byte) error {
	v, err := ParseDataClass(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

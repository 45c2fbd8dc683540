package tca

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"
)

// bundledJSON is our own compact description of the core tables t3agent
// works with, for sites where neither a TCA cache file nor an export is
// available. Labels are plain English rather than LLL references. Tests
// hold its ctrl and column settings against real TYPO3 v13 output.
//
//go:embed bundled.json
var bundledJSON []byte

// bundledTables parses the embedded description once; every Bundled call
// builds its own typed model from it, so callers may not share mutations.
var bundledTables = sync.OnceValues(func() (*Array, error) {
	v, err := DecodeJSON(bytes.NewReader(bundledJSON))
	if err != nil {
		return nil, err
	}
	a, ok := v.(*Array)
	if !ok {
		return nil, fmt.Errorf("bundled TCA is %s, not an object", kind(v))
	}
	return a, nil
})

// BundledSource is the Source of the TCA returned by Bundled.
const BundledSource = "bundled"

// Bundled returns t3agent's built-in TCA for the TYPO3 v13 core tables
// (pages, tt_content, sys_template, sys_category, the sys_file* tables,
// backend_layout, be_users/be_groups, fe_users/fe_groups). It panics only
// if the embedded data is broken, which the package tests rule out.
func Bundled() *TCA {
	a, err := bundledTables()
	if err == nil {
		var t *TCA
		if t, err = FromArray(a, BundledSource); err == nil {
			return t
		}
	}
	panic("tca: embedded bundled TCA is invalid: " + err.Error())
}

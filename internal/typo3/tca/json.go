package tca

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DecodeJSON reads one JSON value into the same generic form ParseVarExport
// produces, as PHP's json_decode($s, true) would see it: objects keep their
// key order, numeric-string keys become integer keys, lists get keys 0…n-1,
// numbers without fraction or exponent are int64 (float64 beyond int64).
// An empty JSON list and an empty object both become an empty *Array.
func DecodeJSON(r io.Reader) (any, error) {
	d := json.NewDecoder(r)
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, jsonErr(d, err)
	}
	if _, err := d.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the top-level value")
		}
		return nil, jsonErr(d, err)
	}
	return v, nil
}

func jsonErr(d *json.Decoder, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("JSON at byte %d: %w", d.InputOffset(), err)
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, fmt.Errorf("values are nested deeper than %d levels", maxDepth)
		}
		b := builder{a: &Array{}}
		if t == '[' {
			for i := int64(0); d.More(); i++ {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				b.a.Keys = append(b.a.Keys, IntKey(i))
				b.a.Values = append(b.a.Values, v)
			}
		} else {
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string: %v", kt)
				}
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				// json_decode keeps the last of repeated keys, in the
				// first one's place, just as the builder does.
				b.set(StrKey(key), v)
			}
		}
		if _, err := d.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return b.a, nil
	case json.Number:
		return jsonNumber(t)
	case string, bool, nil:
		return t, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

func jsonNumber(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return nil, fmt.Errorf("bad number %s", s)
	}
	return f, nil
}
